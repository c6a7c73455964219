import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import type { Call } from '../../../../../test/support/runs';
import { PE, rewindCursor, setupTriggerPipelines, tickAt } from '../../../../../test/support/triggers';

// Downtime with each catch-up policy, and overlap policies against a run that is still active
// (no worker runs here, so a started run stays queued until it is canceled). The tick is driven
// by an injected clock.

describe('schedule tick: catch-up and overlap', () => {
  let t: TestApp;
  let call: Call;
  const base = `${PE}/pipelines/nightly/triggers`;
  const create = async (slug: string, s: Record<string, unknown>) => {
    const res = await call('POST', base, {
      name: slug,
      slug,
      kind: 'schedule',
      schedule: { time_zone: 'UTC', ...s },
    });
    expect(res.statusCode, res.body).toBe(201);
  };
  const ledger = async (slug: string) =>
    ((await call('GET', `${base}/${slug}/occurrences?order=asc&limit=100`)).json().occurrences as any[]).map(
      (o) => [o.nominal_at.slice(11, 16), o.outcome] as [string, string],
    );
  const runsOf = async (slug: string) =>
    (await call('GET', `${PE}/runs?trigger_slug=${slug}&limit=100`)).json().runs as any[];
  const cancelAll = async (slug: string) => {
    for (const r of await runsOf(slug))
      if (r.state === 'queued') await call('POST', `${PE}/runs/${r.slug}:cancel`);
  };

  beforeAll(async () => {
    t = await startTestApp();
    ({ call } = await setupTriggerPipelines(t));
  });
  afterAll(async () => {
    await t?.close();
  });

  // Hourly from 00:00; the scheduler was down until 05:30: 01:00–05:00 were missed.
  const downtime = async (slug: string, catchUp: Record<string, unknown>) => {
    await create(slug, { cron: '0 * * * *', overlap: 'allow', catch_up: catchUp });
    await rewindCursor(t, slug, '2026-02-01T00:00:00.000Z');
    await tickAt(t, '2026-02-01T05:30:00Z');
  };

  it('latest: starts the newest missed occurrence and records the others', async () => {
    await downtime('cu-latest', { policy: 'latest' });
    expect(await ledger('cu-latest')).toEqual([
      ['01:00', 'skipped_catch_up'],
      ['02:00', 'skipped_catch_up'],
      ['03:00', 'skipped_catch_up'],
      ['04:00', 'skipped_catch_up'],
      ['05:00', 'started'],
    ]);
    expect(await runsOf('cu-latest')).toHaveLength(1);
  });

  it('skip: starts none of the missed ones, then fires on time again', async () => {
    await downtime('cu-skip', { policy: 'skip' });
    const l = await ledger('cu-skip');
    expect(l.map((x) => x[1])).toEqual(Array(5).fill('skipped_catch_up'));
    expect(await runsOf('cu-skip')).toHaveLength(0);
    await tickAt(t, '2026-02-01T06:00:05Z');
    expect((await ledger('cu-skip')).at(-1)).toEqual(['06:00', 'started']);
    expect(await runsOf('cu-skip')).toHaveLength(1);
  });

  it('all: starts every missed occurrence up to max_runs, oldest first', async () => {
    await downtime('cu-all', { policy: 'all', max_runs: 3 });
    expect(await ledger('cu-all')).toEqual([
      ['01:00', 'skipped_catch_up'],
      ['02:00', 'skipped_catch_up'],
      ['03:00', 'started'],
      ['04:00', 'started'],
      ['05:00', 'started'],
    ]);
    const runs = await runsOf('cu-all');
    expect(runs).toHaveLength(3);
    const occ = (await call('GET', `${base}/cu-all/occurrences?outcome=skipped_catch_up`)).json().occurrences;
    expect(occ.every((o: any) => o.reason.includes('max_runs'))).toBe(true);
  });

  it('all within a window: occurrences older than the window are recorded, never started', async () => {
    await downtime('cu-window', { policy: 'all', window_seconds: 7200 });
    expect(await ledger('cu-window')).toEqual([
      ['01:00', 'skipped_catch_up'],
      ['02:00', 'skipped_catch_up'],
      ['03:00', 'skipped_catch_up'],
      ['04:00', 'started'],
      ['05:00', 'started'],
    ]);
  });

  it('a repeated tick at the same instant decides nothing twice', async () => {
    const runs = (await runsOf('cu-latest')).length;
    const rows = (await ledger('cu-latest')).length;
    await tickAt(t, '2026-02-01T06:00:05Z');
    await tickAt(t, '2026-02-01T06:00:05Z');
    await tickAt(t, '2026-02-01T05:30:00Z');
    expect(await runsOf('cu-latest')).toHaveLength(runs);
    expect(await ledger('cu-latest')).toHaveLength(rows);
  });

  const every10 = async (slug: string, overlap: string) => {
    await create(slug, { cron: '*/10 * * * *', overlap });
    await rewindCursor(t, slug, '2026-03-01T09:55:00.000Z');
    await tickAt(t, '2026-03-01T10:00:00Z');
    await tickAt(t, '2026-03-01T10:10:00Z');
    await tickAt(t, '2026-03-01T10:20:00Z');
  };

  it('overlap skip: an occurrence while the run is active is skipped with the run named', async () => {
    await every10('ov-skip', 'skip');
    expect(await ledger('ov-skip')).toEqual([
      ['10:00', 'started'],
      ['10:10', 'skipped_overlap'],
      ['10:20', 'skipped_overlap'],
    ]);
    const [run] = await runsOf('ov-skip');
    const occ = (await call('GET', `${base}/ov-skip/occurrences?outcome=skipped_overlap`)).json().occurrences;
    expect(occ[0].reason).toContain(run.slug);
    await cancelAll('ov-skip');
    await tickAt(t, '2026-03-01T10:30:00Z');
    expect((await ledger('ov-skip')).at(-1)).toEqual(['10:30', 'started']);
  });

  it('overlap buffer_one: keeps one occurrence and starts it when the run finishes', async () => {
    await every10('ov-buffer', 'buffer_one');
    expect(await ledger('ov-buffer')).toEqual([
      ['10:00', 'started'],
      ['10:10', 'buffered'],
      ['10:20', 'skipped_overlap'],
    ]);
    await tickAt(t, '2026-03-01T10:21:00Z');
    expect(await runsOf('ov-buffer')).toHaveLength(1);
    await cancelAll('ov-buffer');
    await tickAt(t, '2026-03-01T10:22:00Z');
    expect(await ledger('ov-buffer')).toEqual([
      ['10:00', 'started'],
      ['10:10', 'started'],
      ['10:20', 'skipped_overlap'],
    ]);
    expect(await runsOf('ov-buffer')).toHaveLength(2);
  });

  it('overlap allow: every occurrence starts', async () => {
    await every10('ov-allow', 'allow');
    expect((await ledger('ov-allow')).map((x) => x[1])).toEqual(['started', 'started', 'started']);
    expect(await runsOf('ov-allow')).toHaveLength(3);
  });

  it('a pipeline without a deployment records failed with the reason', async () => {
    const org = '/organizations/acme/projects/shop/pipelines';
    expect((await call('POST', org, { name: 'bare', slug: 'bare' })).statusCode).toBe(201);
    const res = await call('POST', `${PE}/pipelines/bare/triggers`, {
      name: 'b',
      slug: 'bare-hourly',
      kind: 'schedule',
      schedule: { cron: '0 * * * *', time_zone: 'UTC' },
    });
    expect(res.statusCode).toBe(201);
    await rewindCursor(t, 'bare-hourly', '2026-02-01T00:30:00.000Z');
    await tickAt(t, '2026-02-01T01:00:00Z');
    const occ = (await call('GET', `${PE}/pipelines/bare/triggers/bare-hourly/occurrences`)).json()
      .occurrences;
    expect(occ).toHaveLength(1);
    expect(occ[0]).toMatchObject({ outcome: 'failed', run_slug: null });
    expect(occ[0].reason).toContain('no active deployment');
  });
});
