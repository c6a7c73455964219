import { and, eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpPeer, startSmtpPeer } from '../../../../../test/peers/smtp';
import { sessionCookieOf, signUpWithToken } from '../../../../../test/support/accounts';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { buildAppHost } from '../../app-host/app-host';
import { events, members, organizations, sessions, users } from '../../db/schema/index';

const CANARY = 'canary-Pa55word-7c1e9f2a';

// vitest projects do not inherit the root timeouts, so this suite states its own.
describe('users: sign-up, email verification, me', { timeout: 60_000 }, () => {
  let t: TestApp;
  let peer: SmtpPeer;
  let appHost: FastifyInstance;
  let owner: { api_key: string; personal_access_token: string; user_slug: string };
  beforeAll(async () => {
    peer = await startSmtpPeer();
    t = await startTestApp({ env: { SLUICE_SMTP_URL: peer.url }, worker: true });
    appHost = await buildAppHost(t.rt.deps);
    owner = await t.bootstrap('acme');
  }, 120_000);
  afterAll(async () => {
    await appHost?.close();
    await t?.close();
    await peer?.close();
  });

  it('signs up, mails a token over SMTP, verifies once', async () => {
    const res = await t.call('POST', '/users', {
      body: { email: 'Alice@Example.com', password: CANARY, name: 'Alice Liddell' },
    });
    expect(res.statusCode).toBe(201);
    const user = res.json();
    expect(user).toEqual({
      slug: 'alice-liddell',
      email: 'alice@example.com',
      name: 'Alice Liddell',
      email_verified: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(res.headers['ratelimit-limit']).toBeTruthy();

    const mail = await peer.waitFor((m) => m.to.some((a) => a.includes('alice@example.com')), 20_000);
    const token = /token=([0-9A-Za-z]+)/.exec(mail.text)?.[1];
    expect(token).toBeTruthy();

    const ok = await t.call('POST', '/users/email-verification', { body: { token } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().email_verified).toBe(true);

    const again = await t.call('POST', '/users/email-verification', { body: { token } });
    const unknown = await t.call('POST', '/users/email-verification', { body: { token: 'nope' } });
    expect(again.statusCode).toBe(400);
    expect(again.json().error.code).toBe('VALIDATION_FAILED');
    // Used and unknown tokens are indistinguishable.
    expect({ ...again.json().error, request_id: 0 }).toEqual({ ...unknown.json().error, request_id: 0 });
    const missing = await t.call('POST', '/users/email-verification', { body: {} });
    expect(missing.json().error.code).toBe('VALIDATION_FAILED');
  });

  it('answers a registered address like a new one and mails its owner instead', async () => {
    const shape = (res: { statusCode: number; headers: Record<string, unknown>; json(): any }) => ({
      status: res.statusCode,
      headers: Object.keys(res.headers).sort(),
      body: Object.keys(res.json()).sort(),
      verified: res.json().email_verified,
    });
    const fresh = await t.call('POST', '/users', {
      body: { email: 'erin@example.com', password: 'another-long-password', name: 'Other' },
    });
    const dup = await t.call('POST', '/users', {
      body: { email: 'ALICE@example.com', password: 'another-long-password', name: 'Other' },
    });
    expect(fresh.statusCode, fresh.body).toBe(201);
    expect(shape(dup)).toEqual(shape(fresh));
    // Both answers are what the request asked for: nothing of the existing account shows.
    expect(dup.json()).toMatchObject({ email: 'alice@example.com', name: 'Other', email_verified: false });
    expect(dup.json().slug).toMatch(/^other-[a-z0-9]{6}$/);
    expect(dup.body).not.toContain('Alice Liddell');

    // The owner of the address hears of it; a new address gets its verification mail.
    const told = await peer.waitFor(
      (m) => m.to.some((a) => a.includes('alice@example.com')) && /tried/.test(m.subject),
      20_000,
    );
    expect(told.text).toContain('already has one');
    expect(told.text).toContain('/sign-in');
    expect(told.text).not.toMatch(/token=/);
    await peer.waitFor((m) => m.to.some((a) => a.includes('erin@example.com')), 20_000);
    const alices = await t.rt.deps.db.select().from(users).where(eq(users.email, 'alice@example.com'));
    expect(alices).toHaveLength(1);
    expect(alices[0].name).toBe('Alice Liddell');
    const ghost = await t.rt.deps.db.select().from(users).where(eq(users.slug, dup.json().slug));
    expect(ghost).toEqual([]);

    // A chosen slug that is taken is refused whatever the address, so it tells nothing either.
    for (const email of ['alice@example.com', 'nobody-yet@example.com']) {
      const taken = await t.call('POST', '/users', {
        body: { email, password: 'another-long-password', name: 'Other', slug: 'alice-liddell' },
      });
      expect(taken.statusCode, email).toBe(409);
      expect(taken.json().error.message).toBe('that user slug is taken; choose another or leave slug out');
    }
  });

  it('refuses a weak password and unknown fields', async () => {
    const weak = await t.call('POST', '/users', {
      body: { email: 'bob@example.com', password: 'short', name: 'Bob' },
    });
    expect(weak.statusCode).toBe(400);
    expect(weak.json().error.code).toBe('VALIDATION_FAILED');
    expect(weak.json().error.validation_errors[0].path).toBe('password');

    const extra = await t.call('POST', '/users', {
      body: { email: 'bob@example.com', password: 'long-enough-password', name: 'Bob', admin: true },
    });
    expect(extra.statusCode).toBe(400);
    const badEmail = await t.call('POST', '/users', {
      body: { email: 'not-an-email', password: 'long-enough-password', name: 'Bob' },
    });
    expect(badEmail.json().error.code).toBe('VALIDATION_FAILED');
    const [bob] = await t.rt.deps.db.select().from(users).where(eq(users.email, 'bob@example.com'));
    expect(bob).toBeUndefined();
  });

  it('reads and updates the token owner; API keys are refused', async () => {
    const me = await t.call('GET', '/users/me', { token: owner.personal_access_token });
    expect(me.statusCode).toBe(200);
    expect(me.json().slug).toBe(owner.user_slug);
    expect(me.json().email).toBe('owner@example.com');

    const byKey = await t.call('GET', '/users/me', { token: owner.api_key });
    expect(byKey.statusCode).toBe(403);
    expect(byKey.json().error.code).toBe('FORBIDDEN');
    expect((await t.call('GET', '/users/me')).statusCode).toBe(401);

    const renamed = await t.call('PATCH', '/users/me', {
      token: owner.personal_access_token,
      body: { name: 'The Owner' },
    });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json().name).toBe('The Owner');
    expect(renamed.json().slug).toBe(owner.user_slug);

    // Bootstrap made the owner without a password: no password signs in, and the owner's own
    // token sets the first one without a current one.
    const signIn = (password: string) =>
      appHost.inject({ method: 'POST', url: '/session', payload: { email: 'owner@example.com', password } });
    expect((await signIn(CANARY)).statusCode).toBe(401);
    const first = await t.call('PATCH', '/users/me', {
      token: owner.personal_access_token,
      body: { password: CANARY },
    });
    expect(first.statusCode).toBe(200);
    expect((await signIn(CANARY)).statusCode).toBe(201);
    // Now that it has one, a change needs it.
    const noCurrent = await t.call('PATCH', '/users/me', {
      token: owner.personal_access_token,
      body: { password: `${CANARY}-2` },
    });
    expect(noCurrent.statusCode).toBe(400);
    expect(noCurrent.json().error.validation_errors[0]).toMatchObject({
      path: 'current_password',
      code: 'required',
    });
    const wrong = await t.call('PATCH', '/users/me', {
      token: owner.personal_access_token,
      body: { password: `${CANARY}-2`, current_password: 'not-the-password' },
    });
    expect(wrong.statusCode).toBe(400);
    expect((await signIn(CANARY)).statusCode).toBe(201);
    const badName = await t.call('PATCH', '/users/me', {
      token: owner.personal_access_token,
      body: { name: '' },
    });
    expect(badName.json().error.code).toBe('ENTITY_NAME_INVALID');

    // The account change is recorded in the owner's organization, as an event on the member.
    const [acme] = await t.rt.deps.db.select().from(organizations).where(eq(organizations.slug, 'acme'));
    const rows = await t.rt.deps.db
      .select()
      .from(events)
      .where(and(eq(events.organizationId, acme.id), eq(events.entityType, 'member')));
    expect(rows.filter((e) => e.action === 'update')).toContainEqual(
      expect.objectContaining({
        eventClass: 'activity',
        actorType: 'user',
        actorSlug: owner.user_slug,
        entitySlug: owner.user_slug,
        metadata: { fields: ['name'] },
      }),
    );
  });

  it('changes the password with the current one and records it as security-relevant', async () => {
    // Alice joins acme so her account events have an organization to land in.
    const db = t.rt.deps.db;
    const [alice] = await db.select().from(users).where(eq(users.email, 'alice@example.com'));
    const [acme] = await db.select().from(organizations).where(eq(organizations.slug, 'acme'));
    await db.insert(members).values({ organizationId: acme.id, userId: alice.id, role: 'viewer' });
    const signIn = await appHost.inject({
      method: 'POST',
      url: '/session',
      payload: { email: 'alice@example.com', password: CANARY },
    });
    expect(await db.select().from(sessions).where(eq(sessions.userId, alice.id))).toHaveLength(1);
    const pat = await appHost.inject({
      method: 'POST',
      url: '/session/personal-access-tokens',
      cookies: { sluice_session: sessionCookieOf(signIn) },
      headers: { 'x-csrf-token': signIn.json().csrf_token },
      payload: { name: 'laptop' },
    });
    const res = await t.call('PATCH', '/users/me', {
      token: pat.json().token,
      body: { password: `${CANARY}-new`, current_password: CANARY },
    });
    expect(res.statusCode).toBe(200);
    const rows = await db
      .select()
      .from(events)
      .where(
        and(
          eq(events.organizationId, acme.id),
          eq(events.entitySlug, alice.slug),
          eq(events.action, 'update'),
        ),
      );
    expect(rows.map((e) => e.eventClass).sort()).toEqual(['activity', 'security_audit']);
    expect(rows[0].metadata).toEqual({ fields: ['password'] });
    // Every browser session of Alice ended with the change, the one that minted the token too.
    expect(await db.select().from(sessions).where(eq(sessions.userId, alice.id))).toHaveLength(0);
    const stale = await appHost.inject({
      method: 'GET',
      url: '/session',
      cookies: { sluice_session: sessionCookieOf(signIn) },
    });
    expect(stale.statusCode).toBe(401);
    // The token itself is not a session and keeps working.
    expect((await t.call('GET', '/users/me', { token: pat.json().token })).statusCode).toBe(200);
    // The old password no longer signs in; the new one does.
    const old = await appHost.inject({
      method: 'POST',
      url: '/session',
      payload: { email: 'alice@example.com', password: CANARY },
    });
    expect(old.statusCode).toBe(401);
  });

  it('resends verification only while unverified', async () => {
    const verified = await t.call('POST', '/users/me/email-verification:resend', {
      token: owner.personal_access_token,
    });
    expect(verified.statusCode).toBe(409);
    const carol = await signUpWithToken(t, appHost, { email: 'carol@example.com', name: 'Carol' });
    await peer.waitFor((m) => m.to.some((a) => a.includes('carol@example.com')), 20_000);
    const res = await t.call('POST', '/users/me/email-verification:resend', { token: carol.token });
    expect(res.statusCode).toBe(202);
    expect(res.json().email_verified).toBe(false);
    await expect
      .poll(() => peer.messages.filter((m) => m.to.some((a) => a.includes('carol@example.com'))).length, {
        timeout: 20_000,
      })
      .toBe(2);
  });

  it('never writes the password to a log line or an event', async () => {
    const all = await t.rt.deps.db.select().from(events);
    expect(JSON.stringify(all)).not.toContain(CANARY);
    expect(t.logs()).not.toContain(CANARY);
    expect(t.logs().length).toBeGreaterThan(0);
  });
});
