import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organizations } from '../../packages/server/src/db/schema/index';
import type { BootstrapResult } from '../../packages/server/src/modules/system/bootstrap';
import { startTestApp, type TestApp } from '../support/app';
import {
  createdAts,
  type ListSeed,
  names,
  seedAlertDestinations,
  seedAlertPolicies,
  seedEvents,
  seedInvitations,
  seedMembers,
  seedNotifications,
  seedOrganizations,
  seedPats,
  seedRoles,
  updatedAts,
} from './list-seeds';
import { fillUrl, insertApiKey, manyCallsEnv, paramsOf, printServerErrors, sqlRows } from './support';

// The vitest projects do not inherit the root timeouts, and these suites make many calls.
const slow = { timeout: 300_000 };

// Cursor pagination must lose and repeat nothing even when many rows share a sort value, in both
// directions, for every sort and order, and refuse whatever it cannot interpret.

// 64 keys over 5 creation times, 4 update times and 11 names: a dozen rows share each sort value,
// so every page boundary falls inside a tie at every page size below.
const KEYS = 64;

type Walk = { pages: number; forward: string[]; backward: string[] };

describe('pagination', slow, () => {
  let t: TestApp;
  let boot: BootstrapResult;
  let orgId: string;

  /** Every slug of a list, walked with next_cursor to the end and back with prev_cursor. */
  async function walk(
    path: string,
    listKey: string,
    query: Record<string, string>,
    limit: number,
    opts: { id?: string; token?: string } = {},
  ): Promise<Walk> {
    const get = async (extra: Record<string, string>) => {
      const qs = new URLSearchParams({ ...query, limit: String(limit), ...extra });
      const res = await t.call('GET', `${path}?${qs}`, { token: opts.token ?? boot.api_key });
      expect(res.statusCode, `${path}?${qs}: ${res.body}`).toBe(200);
      const body = res.json();
      const items: string[] = body[listKey].map((i: any) => i[opts.id ?? 'slug']);
      expect(items.every((i) => typeof i === 'string')).toBe(true);
      expect(items.length).toBeLessThanOrEqual(limit);
      return { items, body, ctx: `${path}?${qs}` };
    };
    const pages: { items: string[]; body: any }[] = [];
    let page = await get({});
    expect(page.body.prev_cursor, page.ctx).toBeNull();
    pages.push(page);
    while (page.body.has_more) {
      expect(page.items.length, page.ctx).toBe(limit);
      expect(page.body.next_cursor, page.ctx).toBeTruthy();
      page = await get({ cursor: page.body.next_cursor });
      pages.push(page);
      expect(pages.length).toBeLessThan(KEYS + 10);
    }
    expect(page.body.next_cursor, page.ctx).toBeNull();
    const forward = pages.flatMap((p) => p.items);

    // Back from the last page to the first.
    const backPages: string[][] = [page.items];
    let cursor: string | null = page.body.prev_cursor;
    if (pages.length > 1) expect(cursor, page.ctx).toBeTruthy();
    while (cursor) {
      const back = await get({ cursor, direction: 'prev' });
      expect(back.body.next_cursor, back.ctx).toBeTruthy();
      backPages.unshift(back.items);
      if (back.body.has_more) {
        expect(back.items.length, back.ctx).toBe(limit);
        expect(back.body.prev_cursor, back.ctx).toBeTruthy();
      } else expect(back.body.prev_cursor, back.ctx).toBeNull();
      cursor = back.body.has_more ? back.body.prev_cursor : null;
      expect(backPages.length).toBeLessThan(KEYS + 10);
    }
    return { pages: pages.length, forward, backward: backPages.flat() };
  }

  beforeAll(async () => {
    t = await startTestApp({ env: manyCallsEnv });
    boot = await t.bootstrap('acme');
    const [org] = await t.rt.deps.db.select().from(organizations).where(eq(organizations.slug, 'acme'));
    orgId = org.id;
    for (let i = 1; i < KEYS; i++) {
      await insertApiKey(t, orgId, {
        // Slugs that sort differently from their insertion order, some with hyphens.
        slug: i % 3 === 0 ? `k${(i * 7919) % 1000}` : `k-${(i * 7919) % 1000}`,
        role: 'viewer',
        name: names[i % names.length],
        createdAt: createdAts[i % createdAts.length],
        updatedAt: updatedAts[(i * 3) % updatedAts.length],
      });
    }
  }, slow.timeout);
  afterAll(async () => {
    printServerErrors(t);
    await t?.close();
  }, slow.timeout);

  const sorts = {
    api_key_created_at: 'created_at',
    api_key_updated_at: 'updated_at',
    api_key_name: 'name',
  } as const;

  for (const [sortBy, column] of Object.entries(sorts)) {
    for (const order of ['asc', 'desc'] as const) {
      // One test per page size: vitest's worker RPC times out when a single test runs past 60 s.
      it.each([1, 7, 50])(
        `walks all ${KEYS} API keys by ${sortBy} ${order} in both directions, %i per page`,
        async (limit) => {
          // The database's own collation decides text order; the reference comes from it.
          const reference = (
            await sqlRows(
              t,
              `select slug from api_keys where organization_id = $1 order by ${column} ${order}, slug ${order}`,
              [orgId],
            )
          ).map((r) => r.slug as string);
          expect(reference).toHaveLength(KEYS);
          if (column !== 'name') {
            // Timestamps need no collation: check the reference itself against a JS sort.
            const rows = await sqlRows(
              t,
              `select slug, ${column} as v from api_keys where organization_id = $1`,
              [orgId],
            );
            const at = new Map(rows.map((r) => [r.slug as string, new Date(r.v).getTime()]));
            for (let i = 1; i < reference.length; i++) {
              const d = at.get(reference[i])! - at.get(reference[i - 1])!;
              expect(order === 'asc' ? d : -d).toBeGreaterThanOrEqual(0);
            }
          }
          const w = await walk('/organizations/acme/api-keys', 'api_keys', { sort_by: sortBy, order }, limit);
          expect(w.pages).toBe(Math.ceil(KEYS / limit));
          expect(w.forward, 'forward').toEqual(reference);
          expect(w.backward, 'backward').toEqual(reference);
        },
      );
    }
  }

  it('time-sorted cursors are the sort timestamp and the identifier of the edge item, joined by _', async () => {
    const list = '/organizations/acme/api-keys';
    for (const [sortBy, field] of [
      ['api_key_created_at', 'created_at'],
      ['api_key_updated_at', 'updated_at'],
    ] as const) {
      const first = (
        await t.call('GET', `${list}?limit=3&sort_by=${sortBy}`, { token: boot.api_key })
      ).json();
      const last = first.api_keys.at(-1);
      expect(first.next_cursor).toBe(`${last[field]}_${last.slug}`);
      expect(first.next_cursor).toMatch(
        /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z_[a-z0-9]+(?:-[a-z0-9]+)*$/,
      );
      const second = (
        await t.call(
          'GET',
          `${list}?limit=3&sort_by=${sortBy}&cursor=${encodeURIComponent(first.next_cursor)}`,
          {
            token: boot.api_key,
          },
        )
      ).json();
      expect(second.prev_cursor).toBe(`${second.api_keys[0][field]}_${second.api_keys[0].slug}`);
    }
    // Events: the occurrence time and the event slug.
    const events = (
      await t.call('GET', '/organizations/acme/events?limit=1', { token: boot.api_key })
    ).json();
    expect(events.has_more).toBe(true);
    expect(events.next_cursor).toBe(`${events.events[0].occurred_at}_${events.events[0].slug}`);
  });

  it('cursors of other sorts are opaque and stable: the same page answers the same cursor', async () => {
    const url = '/organizations/acme/api-keys?limit=5&sort_by=api_key_name&order=asc';
    const a = (await t.call('GET', url, { token: boot.api_key })).json();
    const b = (await t.call('GET', url, { token: boot.api_key })).json();
    expect(a.next_cursor).toBeTruthy();
    expect(b.next_cursor).toBe(a.next_cursor);
    // It ends with the identifier of the page's last item; the rest is not to be read.
    expect(a.next_cursor.endsWith(`_${a.api_keys.at(-1).slug}`)).toBe(true);
  });

  it('refuses parameters it cannot interpret, naming them', async () => {
    const list = '/organizations/acme/api-keys';
    const first = (
      await t.call('GET', `${list}?limit=1&sort_by=api_key_name`, { token: boot.api_key })
    ).json();
    const nameCursor: string = first.next_cursor;
    const timeCursor: string = (await t.call('GET', `${list}?limit=1`, { token: boot.api_key })).json()
      .next_cursor;
    expect(nameCursor).toBeTruthy();
    expect(timeCursor).toBeTruthy();
    const cases: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=1.5', 'limit'],
      ['sort_by=api_key_color', 'sort_by'],
      ['order=sideways', 'order'],
      ['direction=up', 'direction'],
      ['colour=blue', 'colour'],
      ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
      ['cursor=%F0%9F%92%A5', 'cursor'],
      [`cursor=${encodeURIComponent(nameCursor)}`, 'cursor'],
      [`cursor=${encodeURIComponent(timeCursor)}&sort_by=api_key_name`, 'cursor'],
      [`cursor=${encodeURIComponent('2025-03-01T12:00:00.000Z_Not!A!Slug')}`, 'cursor'],
      [`cursor=${encodeURIComponent('2025-03-01T12:00:00.000Z_')}`, 'cursor'],
      [`cursor=${encodeURIComponent('2025-13-45T12:00:00.000Z_k-1')}`, 'cursor'],
      [`cursor=${encodeURIComponent('yesterday_k-1')}`, 'cursor'],
      [`cursor=${encodeURIComponent(`${timeCursor.split('_')[0]}_k_1`)}`, 'cursor'],
    ];
    for (const [qs, param] of cases) {
      const res = await t.call('GET', `${list}?${qs}`, { token: boot.api_key });
      const ctx = `?${qs}: ${res.statusCode} ${res.body}`;
      expect(res.statusCode, ctx).toBe(400);
      const error = res.json().error;
      expect(error.code, ctx).toBe('VALIDATION_FAILED');
      const named = (error.validation_errors ?? []).some(
        (e: any) => e.path === param || e.path.endsWith(`.${param}`) || e.message.includes(param),
      );
      expect(named, ctx).toBe(true);
    }
  });

  it('every list refuses a bad limit, an unknown parameter and a garbled cursor', async () => {
    const spec = (await t.call('GET', '/openapi.json')).json();
    let lists = 0;
    for (const r of t.app.routeTable.filter((x) => x.method === 'GET' && !x.hidden)) {
      const templ = r.url.replace(/:([a-z_]+)/g, '{$1}');
      const params: any[] = spec.paths?.[templ]?.get?.parameters ?? [];
      if (!params.some((p) => p.name === 'sort_by')) continue;
      lists++;
      // Query validation comes before any lookup, so a missing parent still answers 400.
      const url = fillUrl(r.url, (p) => (p === 'organization' ? 'acme' : 'does-not-exist'));
      const token = r.url.includes(':organization') ? boot.api_key : boot.personal_access_token;
      for (const [qs, param] of [
        ['limit=0', 'limit'],
        ['limit=101', 'limit'],
        ['limit=abc', 'limit'],
        ['sort_by=nonsense', 'sort_by'],
        ['colour=blue', 'colour'],
        // A cursor is read against its sort by the list itself, after the parent is found.
        ...(paramsOf(r.url).every((p) => p === 'organization')
          ? [
              ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
              [`cursor=${encodeURIComponent('2025-03-01T12:00:00.000Z_Not!A!Slug')}`, 'cursor'],
            ]
          : []),
      ]) {
        const res = await t.call('GET', `${url}?${qs}`, { token });
        const ctx = `${url}?${qs}: ${res.statusCode} ${res.body}`;
        expect(res.statusCode, ctx).toBe(400);
        const error = res.json().error;
        expect(error.code, ctx).toBe('VALIDATION_FAILED');
        const named = (error.validation_errors ?? []).some(
          (e: any) => e.path === param || e.path.endsWith(`.${param}`) || e.message.includes(param),
        );
        expect(named, ctx).toBe(true);
      }
    }
    expect(lists).toBeGreaterThanOrEqual(1);
  });

  // The other lists of the foundation, when their modules are registered: a shorter walk each.
  type OtherList = {
    path: string;
    key: string;
    id: string;
    as: 'api_key' | 'pat';
    seed: ListSeed;
  };
  const otherLists: OtherList[] = [
    { path: '/organizations', key: 'organizations', id: 'slug', as: 'pat', seed: seedOrganizations },
    {
      path: '/organizations/acme/members',
      key: 'members',
      id: 'user_slug',
      as: 'api_key',
      seed: seedMembers,
    },
    { path: '/organizations/acme/roles', key: 'roles', id: 'slug', as: 'api_key', seed: seedRoles },
    {
      path: '/organizations/acme/invitations',
      key: 'invitations',
      id: 'slug',
      as: 'api_key',
      seed: seedInvitations,
    },
    {
      path: '/users/me/personal-access-tokens',
      key: 'personal_access_tokens',
      id: 'slug',
      as: 'pat',
      seed: seedPats,
    },
    { path: '/organizations/acme/events', key: 'events', id: 'slug', as: 'api_key', seed: seedEvents },
    {
      path: '/organizations/acme/notifications',
      key: 'notifications',
      id: 'slug',
      as: 'api_key',
      seed: seedNotifications,
    },
    {
      path: '/organizations/acme/alert-destinations',
      key: 'alert_destinations',
      id: 'slug',
      as: 'api_key',
      seed: seedAlertDestinations,
    },
    {
      path: '/organizations/acme/alert-policies',
      key: 'alert_policies',
      id: 'slug',
      as: 'api_key',
      seed: seedAlertPolicies,
    },
  ];
  for (const list of otherLists) {
    it(`walks ${list.path} for every sort and order`, async () => {
      const route = t.app.routeTable.find(
        (r) => r.method === 'GET' && r.url.replace(':organization', 'acme') === list.path,
      );
      if (!route) return;
      await list.seed(t, orgId, boot);
      const sortBys = await sortsOf(list.path);
      expect(sortBys.length).toBeGreaterThan(0);
      const opts = { id: list.id, token: list.as === 'pat' ? boot.personal_access_token : boot.api_key };
      for (const sortBy of sortBys) {
        for (const order of ['asc', 'desc']) {
          // The one-page answer is the reference; small pages must reproduce it exactly.
          const one = await walk(list.path, list.key, { sort_by: sortBy, order }, 100, opts);
          expect(one.pages).toBe(1);
          expect(one.forward.length).toBeGreaterThanOrEqual(30);
          expect(new Set(one.forward).size).toBe(one.forward.length);
          // One per page is walked on the API keys above; here 2 and 7 put boundaries inside ties.
          for (const limit of [2, 7]) {
            const w = await walk(list.path, list.key, { sort_by: sortBy, order }, limit, opts);
            expect(w.forward, `${sortBy} ${order} limit ${limit}`).toEqual(one.forward);
            expect(w.backward, `${sortBy} ${order} limit ${limit} back`).toEqual(one.forward);
          }
        }
      }
    });
  }

  /** The sort_by values a list accepts, read from its 400 answer to an unknown one. */
  async function sortsOf(path: string): Promise<string[]> {
    const spec = (await t.call('GET', '/openapi.json')).json();
    const templ = path.replace('/acme/', '/{organization}/');
    const params: any[] = spec.paths?.[templ]?.get?.parameters ?? [];
    const sortBy = params.find((p) => p.name === 'sort_by');
    return sortBy?.schema?.enum ?? [];
  }
});
