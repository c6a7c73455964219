import { and, eq, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpWithToken } from '../../../../../test/support/accounts';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { buildAppHost } from '../../app-host/app-host';
import {
  accountDeletionRequests,
  events,
  invitations,
  members,
  organizations,
  sessions,
  users,
} from '../../db/schema/index';

const path = '/users/me/deletion-request';
const confirm = { confirmation: 'DELETE MY ACCOUNT' };
const requestKeys = ['organization_removal_required', 'ownership_required', 'requested_at', 'slug', 'state'];

// vitest projects do not inherit the root timeouts, so this suite states its own.
describe('account deletion', { timeout: 60_000 }, () => {
  let t: TestApp;
  let appHost: FastifyInstance;
  let owner: { personal_access_token: string; user_slug: string; api_key: string };
  let acmeId: string;
  // Memberships are set up in the store directly: this suite is about deletion, not joining.
  const join = async (email: string, role: string) => {
    const [u] = await t.rt.deps.db.select().from(users).where(eq(users.email, email));
    await t.rt.deps.db.insert(members).values({ organizationId: acmeId, userId: u.id, role });
  };
  const stored = async (slug: string) => {
    const [row] = await t.rt.deps.db
      .select()
      .from(accountDeletionRequests)
      .where(eq(accountDeletionRequests.slug, slug));
    return row;
  };
  const userIdOf = async (email: string) => {
    const [u] = await t.rt.deps.db.select().from(users).where(eq(users.email, email));
    return u.id;
  };

  beforeAll(async () => {
    t = await startTestApp();
    appHost = await buildAppHost(t.rt.deps);
    owner = await t.bootstrap('acme');
    const [acme] = await t.rt.deps.db.select().from(organizations).where(eq(organizations.slug, 'acme'));
    acmeId = acme.id;
  }, 120_000);
  afterAll(async () => {
    await appHost?.close();
    await t?.close();
  });

  it('needs the exact confirmation and a personal access token', async () => {
    for (const body of [{ confirmation: 'delete my account' }, {}, { ...confirm, extra: 1 }]) {
      const res = await t.call('POST', path, { token: owner.personal_access_token, body });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_FAILED');
    }
    expect((await t.call('POST', path, { token: owner.api_key, body: confirm })).statusCode).toBe(403);
  });

  it('keeps the only member of an organization until the organization is removed', async () => {
    const none = await t.call('GET', path, { token: owner.personal_access_token });
    expect(none.statusCode).toBe(404);
    expect(none.json().error.code).toBe('NOT_FOUND');

    const post = await t.call('POST', path, { token: owner.personal_access_token, body: confirm });
    expect(post.statusCode).toBe(201);
    const request = post.json();
    expect(Object.keys(request).sort()).toEqual(requestKeys);
    expect(request).toMatchObject({
      slug: expect.stringMatching(/^adr-/),
      state: 'pending',
      ownership_required: [],
      organization_removal_required: ['acme'],
    });
    expect((await t.call('GET', '/users/me', { token: owner.personal_access_token })).statusCode).toBe(200);

    const get = await t.call('GET', path, { token: owner.personal_access_token });
    expect(get.statusCode).toBe(200);
    expect(get.json()).toEqual(request);

    // Confirming again re-evaluates the same open request (200), it does not pile up new ones.
    const again = await t.call('POST', path, { token: owner.personal_access_token, body: confirm });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(request);
    const rows = await t.rt.deps.db
      .select()
      .from(accountDeletionRequests)
      .where(eq(accountDeletionRequests.userSlug, owner.user_slug));
    expect(rows).toHaveLength(1);

    // The request is recorded in the organization, as a change of the member.
    const recorded = await t.rt.deps.db
      .select()
      .from(events)
      .where(
        and(
          eq(events.organizationId, acmeId),
          eq(events.entitySlug, owner.user_slug),
          sql`${events.metadata}->>'deletion_request_slug' = ${request.slug}`,
        ),
      );
    expect(recorded.length).toBeGreaterThanOrEqual(1);
    expect(recorded[0]).toMatchObject({ entityType: 'member', action: 'update', eventClass: 'activity' });
  });

  it('deletes an account without organizations at once', async () => {
    const solo = await signUpWithToken(t, appHost, { email: 'solo@example.com', name: 'Solo' });
    const soloId = await userIdOf('solo@example.com');
    expect(await t.rt.deps.db.select().from(sessions).where(eq(sessions.userId, soloId))).toHaveLength(1);
    // An earlier invitation to the address, declined, and a pending one, as the store keeps them.
    const invite = (slug: string, status: string) => ({
      organizationId: acmeId,
      slug,
      email: 'Solo@example.com',
      role: 'viewer',
      status,
      expiresAt: new Date(Date.now() + 3_600_000),
    });
    await t.rt.deps.db
      .insert(invitations)
      .values([invite('inv-declined', 'declined'), invite('inv-open', 'pending')]);
    const invitedEvent = 'evt-invited-solo';
    await t.rt.deps.db.insert(events).values({
      organizationId: acmeId,
      slug: invitedEvent,
      eventClass: 'activity',
      actorType: 'user',
      actorSlug: owner.user_slug,
      entityType: 'member_invitation',
      entitySlug: 'inv-declined',
      action: 'create',
      metadata: { email: 'solo@example.com', role: 'viewer' },
    });
    const res = await t.call('POST', path, { token: solo.token, body: confirm });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      slug: expect.stringMatching(/^adr-/),
      state: 'completed',
      ownership_required: [],
      organization_removal_required: [],
      completed_at: expect.any(String),
    });
    // The request outlives the account: user_id is gone, user_slug stays.
    expect(await stored(res.json().slug)).toMatchObject({
      userId: null,
      userSlug: solo.slug,
      state: 'completed',
      failureReason: null,
    });
    expect(await t.rt.deps.db.select().from(sessions).where(eq(sessions.userId, soloId))).toHaveLength(0);
    expect((await t.call('GET', '/users/me', { token: solo.token })).statusCode).toBe(401);
    const session = await appHost.inject({
      method: 'GET',
      url: '/session',
      cookies: { sluice_session: solo.cookie },
    });
    expect(session.statusCode).toBe(401);
    // The address is gone from the audit trail and from answered invitations; the slug stays.
    const trail = JSON.stringify(await t.rt.deps.db.select().from(events));
    expect(trail).not.toContain('solo@example.com');
    expect(trail).toContain(invitedEvent);
    expect(
      await t.rt.deps.db
        .select()
        .from(invitations)
        .where(sql`lower(${invitations.email}) = 'solo@example.com'`),
    ).toEqual([expect.objectContaining({ status: 'pending' })]);
    // The address is free again.
    const again = await t.call('POST', '/users', {
      body: { email: 'solo@example.com', password: 'a-new-long-password', name: 'Solo' },
    });
    expect(again.statusCode).toBe(201);
  });

  it('requires handing over ownership, then lets a plain member leave', async () => {
    const dev = await signUpWithToken(t, appHost, { email: 'dev@example.com', name: 'Dev' });
    await join('dev@example.com', 'developer');

    const first = (await t.call('GET', path, { token: owner.personal_access_token })).json();
    const blocked = await t.call('POST', path, { token: owner.personal_access_token, body: confirm });
    expect(blocked.statusCode).toBe(200);
    expect(blocked.json()).toEqual({
      ...first,
      state: 'ownership_required',
      ownership_required: ['acme'],
      organization_removal_required: [],
    });

    const gone = await t.call('POST', path, { token: dev.token, body: confirm });
    expect(gone.statusCode).toBe(201);
    expect(gone.json().state).toBe('completed');
    const memberEvents = await t.rt.deps.db
      .select()
      .from(events)
      .where(
        and(eq(events.organizationId, acmeId), eq(events.entitySlug, dev.slug), eq(events.action, 'delete')),
      );
    expect(memberEvents.map((e) => e.eventClass).sort()).toEqual(['activity', 'security_audit']);
    expect(memberEvents[0]).toMatchObject({
      entityType: 'member',
      actorType: 'user',
      actorSlug: dev.slug,
      metadata: { reason: 'account_deleted', role: 'developer', deletion_request_slug: gone.json().slug },
    });
    const left = await t.rt.deps.db.select().from(members).where(eq(members.organizationId, acmeId));
    expect(left).toHaveLength(1);

    // With a second owner, the first may go.
    await signUpWithToken(t, appHost, { email: 'heir@example.com', name: 'Heir' });
    await join('heir@example.com', 'owner');
    const ownerId = await userIdOf('owner@example.com');
    const done = await t.call('POST', path, { token: owner.personal_access_token, body: confirm });
    expect(done.statusCode).toBe(200);
    expect(done.json()).toEqual({
      slug: first.slug,
      requested_at: first.requested_at,
      state: 'completed',
      ownership_required: [],
      organization_removal_required: [],
      completed_at: expect.any(String),
    });
    expect(await stored(first.slug)).toMatchObject({ userId: null, userSlug: owner.user_slug });
    expect(await t.rt.deps.db.select().from(users).where(eq(users.id, ownerId))).toHaveLength(0);
    const [stillThere] = await t.rt.deps.db.select().from(organizations).where(eq(organizations.id, acmeId));
    expect(stillThere.slug).toBe('acme');
  });

  it('marks the request failed when the deletion breaks, answers 500 without detail, and retries', async () => {
    const doomed = await signUpWithToken(t, appHost, { email: 'doomed@example.com', name: 'Doomed' });
    const db = t.rt.deps.db;
    // A real database failure at the delete, for this account only (no mock of our code).
    await db.execute(
      sql.raw(`create function refuse_doomed_delete() returns trigger language plpgsql as $$
        begin raise exception 'refused: canary-detail-4f1d'; end $$`),
    );
    await db.execute(
      sql.raw(`create trigger refuse_doomed before delete on users for each row
        when (old.email = 'doomed@example.com') execute function refuse_doomed_delete()`),
    );
    try {
      const res = await t.call('POST', path, { token: doomed.token, body: confirm });
      expect(res.statusCode).toBe(500);
      expect(res.json().error).toEqual({
        code: 'INTERNAL',
        message: 'internal error',
        request_id: expect.any(String),
      });
      expect(res.body).not.toContain('canary-detail');
    } finally {
      await db.execute(sql.raw('drop trigger refuse_doomed on users'));
      await db.execute(sql.raw('drop function refuse_doomed_delete()'));
    }
    // Nothing was deleted; the request says so.
    expect((await t.call('GET', '/users/me', { token: doomed.token })).statusCode).toBe(200);
    const failed = await t.call('GET', path, { token: doomed.token });
    expect(failed.statusCode).toBe(200);
    expect(Object.keys(failed.json()).sort()).toEqual(requestKeys);
    expect(failed.json()).toMatchObject({ state: 'failed', organization_removal_required: [] });
    const row = await stored(failed.json().slug);
    expect(row.failureReason).toBe('database error P0001');
    expect(
      (await appHost.inject({ method: 'GET', url: '/session', cookies: { sluice_session: doomed.cookie } }))
        .statusCode,
    ).toBe(200);

    // A failed request is closed: confirming again makes a new one, which now succeeds.
    const retry = await t.call('POST', path, { token: doomed.token, body: confirm });
    expect(retry.statusCode).toBe(201);
    expect(retry.json().state).toBe('completed');
    expect(retry.json().slug).not.toBe(failed.json().slug);
    expect(await stored(failed.json().slug)).toMatchObject({
      state: 'failed',
      userId: null,
      userSlug: doomed.slug,
    });
  });
});
