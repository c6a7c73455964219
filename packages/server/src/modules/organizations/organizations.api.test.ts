import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { addMember, createUser } from '../../../../../test/support/users';
import { events, members, organizations } from '../../db/schema/index';

// The vitest projects do not inherit the root timeouts, and the machine is shared.
describe('organizations', { timeout: 30_000 }, () => {
  let t: TestApp;
  let pat: string;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp();
    const b = await t.bootstrap('acme');
    pat = b.personal_access_token;
    key = b.api_key;
  }, 120_000);
  afterAll(() => t?.close());

  const db = () => t.rt.deps.db;

  it('creates an organization on a trial with the caller as owner', async () => {
    const before = Date.now();
    const res = await t.call('POST', '/organizations', { token: pat, body: { name: 'Beta Corp' } });
    expect(res.statusCode).toBe(201);
    const org = res.json();
    expect(org).toMatchObject({
      slug: 'beta-corp',
      name: 'Beta Corp',
      plan: { name: 'trial', status: 'trialing' },
      event_log_retention_days: 30,
    });
    const trialEnds = Date.parse(org.plan.trial_ends_at);
    expect(trialEnds - before).toBeGreaterThanOrEqual(14 * 86_400_000 - 1000);
    expect(trialEnds - before).toBeLessThan(14 * 86_400_000 + 60_000);

    const got = await t.call('GET', '/organizations/beta-corp', { token: pat });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(org);

    const [row] = await db().select().from(organizations).where(eq(organizations.slug, 'beta-corp'));
    const owners = await db().select().from(members).where(eq(members.organizationId, row.id));
    expect(owners.map((m) => m.role)).toEqual(['owner']);
    const recorded = await db()
      .select()
      .from(events)
      .where(eq(events.organizationId, row.id))
      .orderBy(events.eventClass);
    expect(recorded.map((e) => `${e.eventClass}:${e.entityType}:${e.action}`).sort()).toEqual([
      'activity:member:create',
      'activity:organization:create',
      'security_audit:member:create',
    ]);
  });

  it('refuses API keys, duplicate slugs and bad bodies on create', async () => {
    const byKey = await t.call('POST', '/organizations', { token: key, body: { name: 'Nope' } });
    expect(byKey.statusCode).toBe(403);
    const dup = await t.call('POST', '/organizations', { token: pat, body: { name: 'x', slug: 'acme' } });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error.code).toBe('CONFLICT');
    const badName = await t.call('POST', '/organizations', { token: pat, body: { name: '' } });
    expect(badName.json().error.code).toBe('ENTITY_NAME_INVALID');
    const extra = await t.call('POST', '/organizations', { token: pat, body: { name: 'a', plan: 'team' } });
    expect(extra.json().error.code).toBe('VALIDATION_FAILED');
    // A generated slug that is taken gets a suffix instead of a conflict.
    const again = await t.call('POST', '/organizations', { token: pat, body: { name: 'Beta Corp' } });
    expect(again.statusCode).toBe(201);
    expect(again.json().slug).toMatch(/^beta-corp-[a-z0-9]{6}$/);
  });

  it('lists member organizations for a user and only its own for an API key', async () => {
    const mine = await t.call('GET', '/organizations?sort_by=organization_name&order=asc', { token: pat });
    expect(mine.statusCode).toBe(200);
    const slugs = mine.json().organizations.map((o: any) => o.slug);
    // Name order follows the database collation, so only membership is asserted here.
    expect(slugs).toEqual(expect.arrayContaining(['acme', 'beta-corp']));
    expect(slugs).toHaveLength(3);

    const byKey = await t.call('GET', '/organizations', { token: key });
    expect(byKey.json()).toMatchObject({ has_more: false, next_cursor: null, prev_cursor: null });
    expect(byKey.json().organizations.map((o: any) => o.slug)).toEqual(['acme']);

    const stranger = await createUser(t);
    const none = await t.call('GET', '/organizations', { token: stranger.token });
    expect(none.json().organizations).toEqual([]);
    expect((await t.call('GET', '/organizations/acme', { token: stranger.token })).statusCode).toBe(404);
    // Another tenant's organization is 404 for an API key too.
    expect((await t.call('GET', '/organizations/beta-corp', { token: key })).statusCode).toBe(404);

    // Paging one at a time walks the same order forwards and back.
    const p1 = (
      await t.call('GET', '/organizations?limit=1&sort_by=organization_name&order=asc', { token: pat })
    ).json();
    expect(p1.has_more).toBe(true);
    const p2 = (
      await t.call(
        'GET',
        `/organizations?limit=1&sort_by=organization_name&order=asc&cursor=${p1.next_cursor}`,
        { token: pat },
      )
    ).json();
    expect(p1.organizations[0].slug).toBe(slugs[0]);
    expect(p2.organizations[0].slug).toBe(slugs[1]);
    const back = (
      await t.call(
        'GET',
        `/organizations?limit=1&sort_by=organization_name&order=asc&direction=prev&cursor=${p2.prev_cursor}`,
        { token: pat },
      )
    ).json();
    expect(back.organizations[0].slug).toBe(slugs[0]);
    expect(back).toMatchObject({ has_more: false, prev_cursor: null });
    const bad = await t.call('GET', '/organizations?sort_by=name', { token: pat });
    expect(bad.statusCode).toBe(400);
  });

  it('shows an expired trial and a paid plan', async () => {
    await db()
      .update(organizations)
      .set({ trialEndsAt: new Date(Date.now() - 1000) })
      .where(eq(organizations.slug, 'beta-corp'));
    const expired = await t.call('GET', '/organizations/beta-corp', { token: pat });
    expect(expired.json().plan.status).toBe('expired');
    await db()
      .update(organizations)
      .set({ plan: 'team', trialEndsAt: null })
      .where(eq(organizations.slug, 'beta-corp'));
    const paid = await t.call('GET', '/organizations/beta-corp', { token: pat });
    expect(paid.json().plan).toEqual({ name: 'team', status: 'active', trial_ends_at: null });
  });

  it('updates name and retention with organizations.write', async () => {
    const res = await t.call('PATCH', '/organizations/acme', {
      token: key,
      body: { name: 'Acme Inc', event_log_retention_days: 7 },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ slug: 'acme', name: 'Acme Inc', event_log_retention_days: 7 });
    expect(Date.parse(res.json().updated_at)).toBeGreaterThan(Date.parse(res.json().created_at));
    const tooLong = await t.call('PATCH', '/organizations/acme', {
      token: key,
      body: { event_log_retention_days: 31 },
    });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().error.validation_errors[0].path).toBe('event_log_retention_days');

    const viewer = await createUser(t);
    await addMember(t, 'acme', viewer, 'viewer');
    const denied = await t.call('PATCH', '/organizations/acme', { token: viewer.token, body: { name: 'x' } });
    expect(denied.statusCode).toBe(403);
    const [org] = await db().select().from(organizations).where(eq(organizations.slug, 'acme'));
    const updates = await db()
      .select()
      .from(events)
      .where(and(eq(events.organizationId, org.id), eq(events.action, 'update')));
    expect(updates.map((e) => e.eventClass).sort()).toEqual(['activity', 'security_audit']);
  });

  it('deletes only with organizations.delete, cascading to members', async () => {
    const created = (await t.call('POST', '/organizations', { token: pat, body: { name: 'Doomed' } })).json();
    const admin = await createUser(t);
    await addMember(t, created.slug, admin, 'admin');
    const denied = await t.call('DELETE', `/organizations/${created.slug}`, { token: admin.token });
    expect(denied.statusCode).toBe(403);
    const [row] = await db().select().from(organizations).where(eq(organizations.slug, created.slug));
    const res = await t.call('DELETE', `/organizations/${created.slug}`, { token: pat });
    expect(res.statusCode).toBe(204);
    expect((await t.call('GET', `/organizations/${created.slug}`, { token: pat })).statusCode).toBe(404);
    expect(await db().select().from(members).where(eq(members.organizationId, row.id))).toEqual([]);
  });

  it('answers 400 for an organization path value over 100 characters, 404 for an unknown one', async () => {
    for (const url of [`/organizations/${'a'.repeat(101)}`, `/organizations/${'b'.repeat(150)}/projects`]) {
      const res = await t.call('GET', url, { token: key });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error).toMatchObject({
        code: 'VALIDATION_FAILED',
        validation_errors: [{ path: 'params.organization', code: 'too_big' }],
      });
    }
    const unknown = await t.call('GET', `/organizations/${'a'.repeat(100)}`, { token: key });
    expect(unknown.statusCode).toBe(404);
  });
});
