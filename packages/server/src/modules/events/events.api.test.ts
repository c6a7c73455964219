import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { type EventFixture, insertEvents } from '../../../../../test/support/events';
import { runJobNow } from '../../../../../test/support/jobs';
import { apiKeys, events, organizations } from '../../db/schema/index';
import { forgetCachedKeys } from '../../http/key-cache';
import { issueToken } from '../../http/tokens';
import { eventsRetentionJob } from '../../jobs/events-retention';

describe('events', () => {
  let t: TestApp;
  let owner: string;
  let acmeId: string;
  let otherId: string;
  let otherKey: string;
  // Fixture events sit in their own hour a day ago, away from the events the app writes.
  const t0 = new Date(Math.floor((Date.now() - 86400_000) / 3600_000) * 3600_000);
  const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
  const f = { e1: 'fx-one', e2: 'fx-two', e3: 'fx-three' };

  const insert = (organizationId: string, rows: EventFixture[]) => insertEvents(t.rt, organizationId, rows);

  const list = async (query: string, token = owner, path = 'events') => {
    const res = await t.call('GET', `/organizations/acme/${path}?${query}`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as {
      events: any[];
      has_more: boolean;
      next_cursor: string | null;
      prev_cursor: string | null;
      event_log_retention_days: number | null;
    };
  };

  beforeAll(async () => {
    t = await startTestApp();
    owner = (await t.bootstrap('acme')).api_key;
    const db = t.rt.deps.db;
    [{ id: acmeId }] = await db.select({ id: organizations.id }).from(organizations);
    // A second tenant, written directly: bootstrap runs once per store.
    const [other] = await db.insert(organizations).values({ slug: 'other', name: 'Other' }).returning();
    otherId = other.id;
    const key = issueToken('key');
    otherKey = key.token;
    await db.insert(apiKeys).values({
      organizationId: otherId,
      slug: 'other-owner',
      name: 'Other owner',
      tokenPrefix: key.prefix,
      tokenHash: key.hash,
      role: 'owner',
      canManageApiKeys: true,
    });
    await insert(acmeId, [
      {
        occurredAt: at(0),
        action: 'update',
        actorType: 'user',
        actorSlug: 'u-one',
        entityType: 'role',
        entitySlug: f.e1,
        requestId: 'req-one',
      },
      {
        occurredAt: at(1),
        action: 'delete',
        actorType: 'api_key',
        actorSlug: 'k-two',
        entityType: 'member',
        entitySlug: f.e2,
        requestId: 'req-two',
      },
      { occurredAt: at(2), action: 'create', actorType: 'external', entityType: 'project', entitySlug: f.e3 },
    ]);
    // The other tenant has look-alike records; none of them may ever show in acme's lists.
    await insert(otherId, [
      { occurredAt: at(0), entitySlug: 'other-secret', requestId: 'req-one', actorSlug: 'u-one' },
      { occurredAt: at(1), entitySlug: 'other-secret', eventClass: 'security_audit' },
    ]);
  });
  afterAll(() => t?.close());

  it('records a mutation with the request id of the call that caused it', async () => {
    const requestId = randomUUID();
    const created = await t.call('POST', '/organizations/acme/api-keys', {
      token: owner,
      body: { name: 'Reader', role: 'viewer' },
      headers: { 'x-request-id': requestId },
    });
    expect(created.statusCode).toBe(201);
    expect(created.headers['x-request-id']).toBe(requestId);

    const activity = await list(`request_id=${requestId}`);
    expect(activity.event_log_retention_days).toBeNull();
    expect(activity.events).toHaveLength(1);
    const [ev] = activity.events;
    expect(Object.keys(ev).sort()).toEqual(
      [
        'schema_version',
        'event_class',
        'slug',
        'actor_type',
        'actor_slug',
        'entity_type',
        'entity_slug',
        'action',
        'request_id',
        'occurred_at',
        'metadata',
        'created_at',
      ].sort(),
    );
    expect(ev).toMatchObject({
      schema_version: 1,
      event_class: 'activity',
      actor_type: 'api_key',
      actor_slug: 'bootstrap',
      entity_type: 'api_key',
      entity_slug: 'reader',
      action: 'create',
      request_id: requestId,
    });
    expect(JSON.stringify(ev.metadata)).not.toContain(created.json().token);

    const audit = await list(`request_id=${requestId}`, owner, 'security-audit-events');
    expect(audit.event_log_retention_days).toBe(30);
    expect(audit.events.map((e) => [e.event_class, e.action])).toEqual([['security_audit', 'create']]);
  });

  it('applies each filter on its own', async () => {
    const cases: [string, string[]][] = [
      ['action=update', [f.e1]],
      ['action=delete', [f.e2]],
      ['actor_slug=u-one', [f.e1]],
      ['actor_type=api_key', [f.e2]],
      ['actor_type=external', [f.e3]],
      ['entity_slug=fx-two', [f.e2]],
      ['entity_type=project', [f.e3]],
      ['request_id=req-one', [f.e1]],
    ];
    for (const [query, expected] of cases) {
      const page = await list(`${query}&limit=100`);
      const [key, value] = query.split('=');
      // Every record matches the filter, and of the fixtures exactly the expected ones are there.
      for (const e of page.events) expect(e[key], query).toBe(value);
      const fixtures = page.events.map((e) => e.entity_slug).filter((s) => Object.values(f).includes(s));
      expect(fixtures, query).toEqual(expected);
    }
    // The bootstrap events are the system's.
    const system = await list('actor_type=system&entity_type=organization');
    expect(system.events.map((e) => [e.action, e.entity_slug])).toEqual([['create', 'acme']]);
  });

  it('treats occurred_from as inclusive and occurred_before as exclusive', async () => {
    const slugs = async (q: string) =>
      (await list(`${q}&order=asc`)).events.map((e) => e.entity_slug as string);
    const iso = (s: number) => at(s).toISOString();
    expect(await slugs(`occurred_from=${iso(1)}&occurred_before=${iso(60)}`)).toEqual([f.e2, f.e3]);
    expect(await slugs(`occurred_from=${iso(0)}&occurred_before=${iso(1)}`)).toEqual([f.e1]);
    expect(await slugs(`occurred_from=${iso(0)}&occurred_before=${iso(2)}`)).toEqual([f.e1, f.e2]);
    expect(await slugs(`occurred_from=${iso(0)}&occurred_before=${iso(0)}`)).toEqual([]);
    // Offsets other than Z denote the same instant.
    const plusOne = new Date(at(1).getTime() + 3600_000).toISOString().replace('Z', '+01:00');
    expect(await slugs(`occurred_from=${iso(0)}&occurred_before=${encodeURIComponent(plusOne)}`)).toEqual([
      f.e1,
    ]);
  });

  it('pages through a window in both directions without gaps or repeats', async () => {
    // 25 records two hours after t0; pairs share a timestamp so the slug tiebreak matters.
    const base = 7200;
    await insert(
      acmeId,
      Array.from({ length: 25 }, (_, i) => ({
        occurredAt: at(base + Math.floor(i / 2)),
        entityType: 'pipeline' as const,
        entitySlug: `pg-${i}`,
      })),
    );
    const window = `occurred_from=${at(base).toISOString()}&occurred_before=${at(base + 60).toISOString()}`;
    const pages: any[] = [];
    let cursor: string | null = null;
    do {
      const page = await list(`${window}&limit=10${cursor ? `&cursor=${cursor}` : ''}`);
      pages.push(page);
      cursor = page.next_cursor;
    } while (cursor);
    expect(pages.map((p) => p.events.length)).toEqual([10, 10, 5]);
    expect(pages.map((p) => p.has_more)).toEqual([true, true, false]);
    expect(pages[0].prev_cursor).toBeNull();
    const all = pages.flatMap((p) => p.events);
    expect(new Set(all.map((e) => e.slug)).size).toBe(25);
    // Newest first; equal timestamps ordered by slug, descending.
    const keys = all.map((e) => `${e.occurred_at}_${e.slug}`);
    expect(keys).toEqual([...keys].sort().reverse());

    const back = await list(`${window}&limit=10&cursor=${pages[1].prev_cursor}&direction=prev`);
    expect(back.events.map((e) => e.slug)).toEqual(pages[0].events.map((e: any) => e.slug));
    expect(back.has_more).toBe(false);

    const asc = await list(`${window}&order=asc&limit=100`);
    expect(asc.events.map((e) => e.slug)).toEqual(all.map((e) => e.slug).reverse());
  });

  it('keeps the two logs apart and hides other tenants', async () => {
    const activity = await list('limit=100');
    expect(activity.events.every((e) => e.event_class === 'activity')).toBe(true);
    const audit = await list('limit=100', owner, 'security-audit-events');
    expect(audit.events.length).toBeGreaterThan(0);
    expect(audit.events.every((e) => e.event_class === 'security_audit')).toBe(true);
    for (const page of [activity, audit]) {
      expect(JSON.stringify(page)).not.toContain('other-secret');
    }
    const shared = await list('request_id=req-one');
    expect(shared.events.map((e) => e.entity_slug)).toEqual([f.e1]);

    // Across tenants it is 404 both ways, never 403.
    for (const path of ['events', 'security-audit-events']) {
      const res = await t.call('GET', `/organizations/other/${path}`, { token: owner });
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('NOT_FOUND');
      const back = await t.call('GET', `/organizations/acme/${path}`, { token: otherKey });
      expect(back.statusCode).toBe(404);
    }
    const theirs = await t.call('GET', '/organizations/other/events?limit=100', { token: otherKey });
    expect(theirs.json().events.map((e: any) => e.entity_slug)).toEqual(['other-secret']);
  });

  it('lets a viewer read activity but not the security log, and audits the denial', async () => {
    const viewer = (
      await t.call('POST', '/organizations/acme/api-keys', {
        token: owner,
        body: { name: 'Viewer', role: 'viewer' },
      })
    ).json().token;
    expect((await t.call('GET', '/organizations/acme/events', { token: viewer })).statusCode).toBe(200);
    const requestId = randomUUID();
    const denied = await t.call('GET', '/organizations/acme/security-audit-events', {
      token: viewer,
      headers: { 'x-request-id': requestId },
    });
    expect(denied.statusCode).toBe(404);
    const audit = await list(`request_id=${requestId}`, owner, 'security-audit-events');
    expect(audit.events).toHaveLength(1);
    expect(audit.events[0]).toMatchObject({
      actor_type: 'api_key',
      actor_slug: 'viewer',
      action: 'read',
      metadata: { outcome: 'permission_denied', permission: 'security_audit.read' },
    });
  });

  it('rejects bad filters and unknown parameters', async () => {
    for (const q of [
      'action=explode',
      'actor_type=robot',
      'entity_type=planet',
      'actor_slug=Not_A_Slug',
      'occurred_from=yesterday',
      'occurred_before=2024-01-01',
      `request_id=${'x'.repeat(256)}`,
      'request_id=',
      'sort_by=event_created_at',
      'colour=blue',
      'limit=101',
    ]) {
      const res = await t.call('GET', `/organizations/acme/events?${q}`, { token: owner });
      expect(res.statusCode, q).toBe(400);
      expect(res.json().error.code, q).toBe('VALIDATION_FAILED');
    }
    const ok = await t.call('GET', `/organizations/acme/events?request_id=${'x'.repeat(255)}`, {
      token: owner,
    });
    expect(ok.statusCode).toBe(200);
  });

  it('prunes records older than each organization its own retention', async () => {
    const db = t.rt.deps.db;
    await db.update(organizations).set({ eventLogRetentionDays: 7 }).where(eq(organizations.id, otherId));
    // Written behind the API's back, as another host would: this host's keys (which carry their
    // organization) are dropped as that host's change would be after SLUICE_API_KEY_CACHE_MS.
    forgetCachedKeys(t.rt.deps.store);
    const daysAgo = (d: number) => new Date(Date.now() - d * 86400_000);
    await insert(acmeId, [
      { occurredAt: daysAgo(31), entitySlug: 'ret-acme-31' },
      { occurredAt: daysAgo(29), entitySlug: 'ret-acme-29' },
      { occurredAt: daysAgo(8), entitySlug: 'ret-acme-8', eventClass: 'security_audit' },
    ]);
    await insert(otherId, [
      { occurredAt: daysAgo(8), entitySlug: 'ret-other-8' },
      { occurredAt: daysAgo(8), entitySlug: 'ret-other-8-audit', eventClass: 'security_audit' },
      { occurredAt: daysAgo(6), entitySlug: 'ret-other-6' },
    ]);
    await runJobNow(t.rt.deps, eventsRetentionJob, {});
    const left = await db
      .select({ slug: events.entitySlug })
      .from(events)
      .where(sql`${events.entitySlug} like 'ret-%'`);
    expect(left.map((r) => r.slug).sort()).toEqual(['ret-acme-29', 'ret-acme-8', 'ret-other-6']);
    // The audit list reports the boundary the job applies.
    const theirs = await t.call('GET', '/organizations/other/security-audit-events', { token: otherKey });
    expect(theirs.json().event_log_retention_days).toBe(7);
  });
});
