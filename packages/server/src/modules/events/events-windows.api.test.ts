import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { type EventFixture, insertEvents } from '../../../../../test/support/events';
import { ensurePartitions, eventsHistory, periodStart } from '../../db/partitions';
import { apiKeys, organizations } from '../../db/schema/index';
import { issueToken } from '../../http/tokens';
import { listEvents } from './events.repo';
import type { ListEventsQuery } from './events.schemas';

// The events lists' windows (events.repo.ts windowOf, docs/operations.md#history-partitions): a
// list reads a window of weeks first and the rest only when needed, and every page is the page of
// the whole list; the window's edge keeps a few statements per list shape.

describe('events windows', () => {
  let t: TestApp;
  let acmeId: string;
  const insert = (organizationId: string, rows: EventFixture[]) => insertEvents(t.rt, organizationId, rows);

  beforeAll(async () => {
    t = await startTestApp();
    await t.bootstrap('acme');
    [{ id: acmeId }] = await t.rt.deps.db.select({ id: organizations.id }).from(organizations);
  });
  afterAll(() => t?.close());

  it('gives every filtered list and each of its pages alike across the weeks it reads first', async () => {
    // Lists read a week first and the rest only when the week holds less than a page
    // (events.repo.ts); each page must be the page of the whole list, on either side of the
    // week's edge. The fixture is an organization of its own, in weekly partitions over 27 days.
    const db = t.rt.deps.db;
    const DAY = 86400_000;
    const now = Date.now();
    for (let d = 28; d >= 0; d -= 7)
      await ensurePartitions(db, { ...eventsHistory, ahead: 0 }, new Date(now - d * DAY));
    const [org] = await db.insert(organizations).values({ slug: 'weeks', name: 'Weeks' }).returning();
    const rows: EventFixture[] = [];
    let n = 0;
    const add = (ms: number, r: Partial<EventFixture> = {}) => {
      n += 1;
      // Fixed-width slugs of letters and digits: every collation orders them as code points do.
      rows.push({ occurredAt: new Date(Math.round(ms)), slug: `wk${String(n).padStart(4, '0')}`, ...r });
    };
    // Dense recent activity (pairs share a time, so the slug decides), thinning out with age.
    for (let i = 0; i < 24; i++)
      add(now - Math.floor(i / 2) * 0.5 * DAY - 60_000, { entityType: 'pipeline' });
    for (let i = 0; i < 30; i++)
      add(now - 7.5 * DAY - i * 0.65 * DAY, {
        entityType: i % 2 ? 'pipeline' : 'project',
        action: i % 3 ? 'update' : 'delete',
      });
    // Seven days back, and around the first window's edge (the start of the week seven days
    // back), both sides and on it, and one ahead of the clock.
    const edge = periodStart(new Date(now - 7 * DAY), 'week').getTime();
    for (const off of [-1, 0, 1, -3600_000, 3600_000]) {
      add(now - 7 * DAY + off, { entityType: 'role' });
      add(edge + off, { entityType: 'role' });
    }
    add(now + 3600_000, { entityType: 'role' });
    // A sparse entity (one event a week), an entity all of whose events are older than a week,
    // an entity with events all over, and a request seen twice ten days apart.
    for (const d of [1, 9, 16, 23]) add(now - d * DAY, { entitySlug: 'sparse', entityType: 'member' });
    for (const d of [8, 8, 12, 19, 26]) add(now - d * DAY, { entitySlug: 'old-only', action: 'delete' });
    for (let d = 0; d < 26; d += 1.3) add(now - d * DAY, { entitySlug: 'busy', actorSlug: 'u-busy' });
    add(now - 2 * DAY, { requestId: 'req-weeks' });
    add(now - 12 * DAY, { requestId: 'req-weeks', eventClass: 'security_audit' });
    add(now - 12 * DAY, { requestId: 'req-weeks' });
    for (let d = 0.5; d < 27; d += 2.5)
      add(now - d * DAY, { eventClass: 'security_audit', actorType: 'user' });
    await insert(org.id, rows);

    type Q = Partial<ListEventsQuery>;
    const matches = (r: EventFixture, q: Q, eventClass: string) =>
      (r.eventClass ?? 'activity') === eventClass &&
      (q.action === undefined || (r.action ?? 'unknown') === q.action) &&
      (q.actor_slug === undefined || r.actorSlug === q.actor_slug) &&
      (q.actor_type === undefined || (r.actorType ?? 'system') === q.actor_type) &&
      (q.entity_slug === undefined || r.entitySlug === q.entity_slug) &&
      (q.entity_type === undefined || (r.entityType ?? 'unknown') === q.entity_type) &&
      (q.request_id === undefined || r.requestId === q.request_id) &&
      (q.occurred_from === undefined || r.occurredAt.getTime() >= Date.parse(q.occurred_from)) &&
      (q.occurred_before === undefined || r.occurredAt.getTime() < Date.parse(q.occurred_before));
    const keyOf = (r: { occurredAt: Date; slug?: string }) => `${r.occurredAt.toISOString()}_${r.slug}`;
    const iso = (daysAgo: number) => new Date(now - daysAgo * DAY).toISOString();
    const filters: Q[] = [
      {},
      { action: 'delete' },
      { action: 'update' },
      { entity_type: 'pipeline' },
      { entity_type: 'role' },
      { entity_slug: 'sparse' },
      { entity_slug: 'old-only' },
      { entity_slug: 'busy' },
      { entity_slug: 'nobody' },
      { actor_slug: 'u-busy' },
      { actor_type: 'user' },
      { request_id: 'req-weeks' },
      { occurred_from: iso(20) },
      { occurred_before: iso(8) },
      { occurred_from: iso(9), occurred_before: iso(3) },
      { occurred_from: iso(25), occurred_before: iso(10), action: 'update' },
      { occurred_before: iso(-1), entity_type: 'pipeline' },
    ];
    let compared = 0;
    for (const eventClass of ['activity', 'security_audit'] as const)
      for (const q of filters)
        for (const order of ['desc', 'asc'] as const) {
          const sign = order === 'desc' ? -1 : 1;
          const expected = rows
            .filter((r) => matches(r, q, eventClass))
            .sort(
              (a, b) =>
                sign * (a.occurredAt.getTime() - b.occurredAt.getTime() || (a.slug! < b.slug! ? -1 : 1)),
            );
          for (const limit of [2, 7, 100]) {
            const what = JSON.stringify({ eventClass, ...q, order, limit });
            const page = (cursor?: string, direction: 'next' | 'prev' = 'next') =>
              listEvents(t.rt.deps.store, org.id, eventClass, {
                ...q,
                limit,
                order,
                direction,
                sort_by: 'event_occurred_at',
                cursor,
              });
            const pages = [];
            let cursor: string | undefined;
            do {
              const p = await page(cursor);
              pages.push(p);
              cursor = p.next_cursor ?? undefined;
            } while (cursor && pages.length <= expected.length);
            // Every page as the whole list cut into pages would give it, cursors included.
            const want = [];
            for (let at = 0; at < expected.length || at === 0; at += limit) {
              const items = expected.slice(at, at + limit);
              const more = at + limit < expected.length;
              want.push({
                slugs: items.map((r) => r.slug),
                has_more: more,
                next_cursor: more ? keyOf(items.at(-1)!) : null,
                prev_cursor: at > 0 ? keyOf(items[0]!) : null,
              });
            }
            const got = pages.map((p) => ({
              slugs: p.items.map((r) => r.slug),
              has_more: p.has_more,
              next_cursor: p.next_cursor,
              prev_cursor: p.prev_cursor,
            }));
            expect(got, what).toEqual(want);
            // Walking back from each page gives the page before it.
            for (let k = 1; k < pages.length; k++) {
              const back = await page(pages[k]!.prev_cursor!, 'prev');
              expect(
                back.items.map((r) => r.slug),
                `${what} back from page ${k}`,
              ).toEqual(want[k - 1]!.slugs);
              expect(back.has_more, `${what} back from page ${k}`).toBe(k > 1);
              expect(back.next_cursor).toBe(keyOf(expected[k * limit - 1]!));
              expect(back.prev_cursor).toBe(k > 1 ? want[k - 1]!.prev_cursor : null);
            }
            compared += pages.length;
          }
        }
    expect(compared).toBeGreaterThan(500);
    // The same through the API: a filtered list whose first page is in the week, the rest not.
    const key = issueToken('key');
    await db.insert(apiKeys).values({
      organizationId: org.id,
      slug: 'weeks-owner',
      name: 'Weeks owner',
      tokenPrefix: key.prefix,
      tokenHash: key.hash,
      role: 'owner',
    });
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await t.call(
        'GET',
        `/organizations/weeks/events?entity_slug=busy&limit=4${cursor ? `&cursor=${cursor}` : ''}`,
        {
          token: key.token,
        },
      );
      expect(res.statusCode, res.body).toBe(200);
      walked.push(...res.json().events.map((e: any) => e.slug));
      cursor = res.json().next_cursor;
    } while (cursor);
    expect(walked).toEqual(
      rows
        .filter((r) => r.entitySlug === 'busy')
        .sort((a, b) => b.occurredAt.getTime() - a.occurredAt.getTime())
        .map((r) => r.slug),
    );
  });

  it('keeps a few statements per list shape, whatever times a client pages from', async () => {
    // A window's edge is written into the statement while recent and bound further back
    // (events.repo.ts edge): twenty old weeks give the same two statements (the window and
    // what lies beyond it), not two a week.
    const names = new Set<string>();
    const store = {
      prepared: ((name, ...rest) => {
        names.add(name);
        return t.rt.deps.store.prepared(name, ...rest);
      }) as typeof t.rt.deps.store.prepared,
    };
    const q = { limit: 5, order: 'desc', direction: 'next', sort_by: 'event_occurred_at' } as const;
    for (let w = 0; w < 20; w++) {
      const before = new Date(Date.UTC(2020, 0, 1) + w * 7 * 86400_000).toISOString();
      await listEvents(store, acmeId, 'activity', { ...q, occurred_before: before });
    }
    expect(names.size).toBe(2);
    names.clear();
    await listEvents(store, acmeId, 'activity', q);
    await listEvents(store, acmeId, 'activity', q);
    expect(names.size).toBeLessThanOrEqual(2);
  });
});
