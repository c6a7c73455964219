import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import type { Call } from '../../../../../test/support/runs';
import { PE, rewindCursor, rows, setupTriggerPipelines, tickAt } from '../../../../../test/support/triggers';

// The trigger resource: CRUD, dry-run previews with DST flags, protected environments, pause
// and resume, events; and the tick through DST with an injected clock.

describe('pipeline triggers', () => {
  let t: TestApp;
  let call: Call;
  const base = `${PE}/pipelines/nightly/triggers`;
  const schedule = (slug: string, s: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    call('POST', base, {
      name: slug,
      slug,
      kind: 'schedule',
      schedule: { time_zone: 'UTC', ...s },
      ...extra,
    });
  const ledger = async (slug: string) =>
    (await call('GET', `${base}/${slug}/occurrences?order=asc&limit=100`)).json().occurrences as any[];

  beforeAll(async () => {
    t = await startTestApp();
    ({ call } = await setupTriggerPipelines(t));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates a schedule with next fire times and last occurrence, lists, gets, and records an event', async () => {
    const res = await schedule('hourly', { cron: '0 * * * *' });
    expect(res.statusCode, res.body).toBe(201);
    const tr = res.json();
    expect(tr).toMatchObject({
      slug: 'hourly',
      kind: 'schedule',
      enabled: true,
      paused: false,
      pause_note: null,
      pipeline_slug: 'nightly',
      environment_slug: 'staging',
      schedule: {
        cron: '0 * * * *',
        time_zone: 'UTC',
        overlap: 'skip',
        catch_up: { policy: 'latest', window_seconds: 86400, max_runs: 10 },
        jitter_seconds: 0,
      },
      webhook: null,
      last_occurrence: null,
    });
    expect(tr.next_fire_times).toHaveLength(5);
    expect(tr.next_fire_times.every((x: string) => x.endsWith(':00:00.000Z'))).toBe(true);
    const got = await call('GET', `${base}/hourly`);
    expect(got.json().slug).toBe('hourly');
    const list = await call('GET', base);
    expect(list.json().pipeline_triggers.map((x: any) => x.slug)).toContain('hourly');
    const ev = await call(
      'GET',
      '/organizations/acme/events?entity_type=pipeline_trigger&entity_slug=hourly',
    );
    expect(ev.json().events.map((e: any) => e.action)).toContain('create');
    expect((await schedule('hourly', { cron: '0 * * * *' })).statusCode).toBe(409);
  });

  it('rejects a bad cron, an unknown zone and a kind without its settings', async () => {
    const bad = await schedule('bad', { cron: '61 * * * *' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.validation_errors[0].path).toBe('schedule.cron');
    const four = await schedule('bad', { cron: '* * * *x' });
    expect(four.statusCode).toBe(400);
    const zone = await schedule('bad', { cron: '0 * * * *', time_zone: 'Mars/Olympus' });
    expect(zone.statusCode).toBe(400);
    expect(zone.json().error.validation_errors[0].path).toBe('schedule.time_zone');
    const none = await call('POST', base, { name: 'x', kind: 'schedule' });
    expect(none.statusCode).toBe(400);
    // `kind` picks the member of the body's union (the document's oneOf): its fields are checked.
    expect(none.json().error.validation_errors[0].path).toBe('schedule');
    const both = await call('POST', base, {
      name: 'x',
      kind: 'schedule',
      schedule: { cron: '0 * * * *', time_zone: 'UTC' },
      webhook: {},
    });
    expect(both.statusCode).toBe(400);
    expect(both.json().error.validation_errors[0]).toMatchObject({
      code: 'unknown_field',
      message: 'unknown field(s): webhook',
    });
    const crossed = await call('POST', base, {
      name: 'x',
      kind: 'webhook',
      schedule: { cron: '0 * * * *', time_zone: 'UTC' },
    });
    expect(crossed.statusCode).toBe(400);
    expect(
      crossed
        .json()
        .error.validation_errors.map((e: any) => e.path)
        .sort(),
    ).toEqual(['(root)', 'webhook']);
    const unknownKind = await call('POST', base, { name: 'x', kind: 'cron' });
    expect(unknownKind.statusCode).toBe(400);
    expect(unknownKind.json().error.validation_errors[0].path).toBe('kind');
    expect((await call('GET', `${base}/bad`)).statusCode).toBe(404);
  });

  it('dry_run previews the next 10 fire times with DST flags and saves nothing', async () => {
    const gap = await call('POST', `${base}?dry_run=true`, {
      name: 'preview',
      kind: 'schedule',
      schedule: { cron: '30 2 * 3 0', time_zone: 'America/New_York' },
    });
    expect(gap.statusCode, gap.body).toBe(200);
    const p = gap.json();
    expect(p).toMatchObject({ dry_run: true, valid: true, time_zone: 'America/New_York' });
    expect(p.tz_version).toEqual(expect.any(String));
    expect(p.next_fire_times).toHaveLength(10);
    // 2027-03-14 is the US spring-forward Sunday: 02:30 does not exist, it fires at 03:00 EDT.
    expect(p.next_fire_times).toContainEqual({
      nominal_at: '2027-03-14T07:00:00.000Z',
      fire_at: '2027-03-14T07:00:00.000Z',
      local_time: '2027-03-14T03:00:00-04:00',
      dst: 'gap_shifted',
    });
    const fall = await call('POST', `${base}?dry_run=true`, {
      name: 'preview',
      kind: 'schedule',
      schedule: { cron: '30 1 * 11 0', time_zone: 'America/New_York', jitter_seconds: 120 },
    });
    const f = fall.json().next_fire_times;
    const nov7 = f.find((x: any) => x.nominal_at === '2027-11-07T05:30:00.000Z');
    expect(nov7).toMatchObject({ local_time: '2027-11-07T01:30:00-04:00', dst: 'repeated' });
    expect(f.filter((x: any) => x.local_time.startsWith('2027-11-07'))).toHaveLength(1);
    for (const x of f) {
      const j = Date.parse(x.fire_at) - Date.parse(x.nominal_at);
      expect(j).toBeGreaterThanOrEqual(0);
      expect(j).toBeLessThanOrEqual(120_000);
    }
    expect((await call('GET', `${base}/preview`)).statusCode).toBe(404);
    const patchPreview = await call('PATCH', `${base}/hourly?dry_run=true`, {
      schedule: { cron: '*/15 * * * *' },
    });
    expect(patchPreview.statusCode).toBe(200);
    expect(patchPreview.json().next_fire_times).toHaveLength(10);
    expect((await call('GET', `${base}/hourly`)).json().schedule.cron).toBe('0 * * * *');
  });

  it('needs the confirmation on a protected environment for every change, not for reads', async () => {
    const org = '/organizations/acme';
    expect(
      (await call('POST', `${org}/environments`, { name: 'Prod', slug: 'prod', protected: true })).statusCode,
    ).toBe(201);
    const link = await call(
      'PUT',
      `${org}/projects/shop/environments/prod?protected_environment_confirmation=prod`,
    );
    // A PUT that creates the link answers 201.
    expect(link.statusCode, link.body).toBe(201);
    const prod = `${org}/projects/shop/environments/prod/pipelines/nightly/triggers`;
    const body = {
      name: 'p',
      slug: 'p',
      kind: 'schedule',
      schedule: { cron: '0 3 * * *', time_zone: 'Europe/Berlin' },
    };
    const refused = await call('POST', prod, body);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.code).toBe('PROTECTED_ENVIRONMENT_CONFIRMATION_REQUIRED');
    expect(
      (await call('POST', prod, { ...body, protected_environment_confirmation: 'prod' })).statusCode,
    ).toBe(201);
    expect((await call('GET', `${prod}/p`)).statusCode).toBe(200);
    expect((await call('PATCH', `${prod}/p`, { paused: true })).statusCode).toBe(409);
    expect(
      (await call('PATCH', `${prod}/p`, { paused: true, protected_environment_confirmation: 'prod' }))
        .statusCode,
    ).toBe(200);
    expect((await call('DELETE', `${prod}/p`)).statusCode).toBe(409);
    expect((await call('DELETE', `${prod}/p?protected_environment_confirmation=prod`)).statusCode).toBe(204);
  });

  it('fires a fixed-time schedule once across the New York fall-back, driven by the clock', async () => {
    expect(
      (await schedule('ny-fall', { cron: '30 1 * * *', time_zone: 'America/New_York', overlap: 'allow' }))
        .statusCode,
    ).toBe(201);
    await rewindCursor(t, 'ny-fall', '2026-10-31T12:00:00.000Z');
    // Every 10 minutes through both copies of 01:00–02:00 local.
    for (let m = 0; m <= 240; m += 10)
      await tickAt(t, new Date(Date.parse('2026-11-01T04:00:00Z') + m * 60_000).toISOString());
    const l = await ledger('ny-fall');
    expect(l.map((o) => [o.nominal_at, o.outcome])).toEqual([['2026-11-01T05:30:00.000Z', 'started']]);
    const runs = (await call('GET', `${PE}/runs?trigger=schedule&trigger_slug=ny-fall`)).json().runs;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ trigger: 'schedule', trigger_slug: 'ny-fall', input_keys: [] });
    expect(l[0].run_slug).toBe(runs[0].slug);
    const got = (await call('GET', `${base}/ny-fall`)).json();
    expect(got.last_occurrence).toMatchObject({
      nominal_at: '2026-11-01T05:30:00.000Z',
      outcome: 'started',
      run_slug: runs[0].slug,
    });
  });

  it('fires an interval schedule on both copies of the repeated hour and skips the spring gap', async () => {
    expect(
      (await schedule('ny-half', { cron: '*/30 * * * *', time_zone: 'America/New_York', overlap: 'allow' }))
        .statusCode,
    ).toBe(201);
    await rewindCursor(t, 'ny-half', '2026-11-01T04:50:00.000Z');
    for (let m = 0; m <= 130; m += 5)
      await tickAt(t, new Date(Date.parse('2026-11-01T04:50:00Z') + m * 60_000).toISOString());
    expect((await ledger('ny-half')).map((o) => o.nominal_at)).toEqual([
      '2026-11-01T05:00:00.000Z',
      '2026-11-01T05:30:00.000Z',
      '2026-11-01T06:00:00.000Z',
      '2026-11-01T06:30:00.000Z',
      '2026-11-01T07:00:00.000Z',
    ]);
    expect(
      (await schedule('ny-gap', { cron: '30 2 * * *', time_zone: 'America/New_York', overlap: 'allow' }))
        .statusCode,
    ).toBe(201);
    await rewindCursor(t, 'ny-gap', '2026-03-07T12:00:00.000Z');
    for (const c of [
      '2026-03-08T06:59:00Z',
      '2026-03-08T07:00:00Z',
      '2026-03-08T08:00:00Z',
      '2026-03-09T06:30:00Z',
    ])
      await tickAt(t, c);
    expect((await ledger('ny-gap')).map((o) => [o.nominal_at, o.outcome])).toEqual([
      ['2026-03-08T07:00:00.000Z', 'started'],
      ['2026-03-09T06:30:00.000Z', 'started'],
    ]);
  });

  it('records every occurrence missed while paused as skipped_paused and never replays it', async () => {
    expect((await schedule('pausy', { cron: '0 * * * *', overlap: 'allow' })).statusCode).toBe(201);
    // The pause starts four hours ago, so resuming on the real clock decides a few hours, not
    // every hour since a fixed date (a cost that would grow each day the suite is run).
    const hour = 3_600_000;
    const start = Math.floor(Date.now() / hour) * hour - 4 * hour;
    const iso = (ms: number) => new Date(ms).toISOString();
    // Every schedule of the earlier cases is placed there too: the ticks below decide every
    // trigger, and a cursor left in 2025 would make them decide a year of hours.
    await rows(
      t,
      `update pipeline_triggers set cursor_nominal_at = $1, next_fire_at = $1 where kind = 'schedule'`,
      [iso(start)],
    );
    await rewindCursor(t, 'pausy', iso(start));
    const paused = await call('PATCH', `${base}/pausy`, {
      paused: true,
      pause_note: 'warehouse maintenance',
    });
    expect(paused.json()).toMatchObject({
      paused: true,
      pause_note: 'warehouse maintenance',
      next_fire_times: [],
    });
    await tickAt(t, iso(start + 2.5 * hour));
    const l = await ledger('pausy');
    expect(l.map((o) => [o.nominal_at, o.outcome])).toEqual([
      [iso(start + hour), 'skipped_paused'],
      [iso(start + 2 * hour), 'skipped_paused'],
    ]);
    // Resuming (on the real clock, hours later) records the rest of the paused time as
    // skipped and replays none of it: the next fire time is in the future.
    const resumed = await call('PATCH', `${base}/pausy`, { paused: false });
    expect(resumed.json()).toMatchObject({ paused: false, pause_note: null });
    const next = Date.parse(resumed.json().next_fire_times[0]);
    expect(next).toBeGreaterThan(Date.now() - 5_000);
    // The tick is on the real clock, but never at or past the next fire time: resumed just before
    // an hour, a tick after it would fire that hour's occurrence, which is not part of the pause.
    await tickAt(t, iso(Math.min(Date.now(), next - 1)));
    const after = await ledger('pausy');
    expect(after.length).toBeGreaterThan(2);
    expect(after.every((o) => o.outcome === 'skipped_paused')).toBe(true);
    expect((await call('GET', `${PE}/runs?trigger_slug=pausy`)).json().runs).toHaveLength(0);
    expect(l[0].reason).toContain('warehouse maintenance');
  });

  it('deletes a trigger (runs it started stay) and writes the event', async () => {
    const before = (await call('GET', `${PE}/runs?trigger_slug=ny-fall`)).json().runs.length;
    expect(before).toBeGreaterThan(0);
    const del = await call('DELETE', `${base}/ny-fall`);
    expect(del.statusCode).toBe(204);
    expect((await call('GET', `${base}/ny-fall`)).statusCode).toBe(404);
    expect((await call('GET', `${PE}/runs?trigger_slug=ny-fall`)).json().runs).toHaveLength(before);
    const n = await rows(
      t,
      `select count(*)::int as n from events where entity_slug = 'ny-fall' and action = 'delete'`,
    );
    expect(n[0].n).toBe(1);
  });
});
