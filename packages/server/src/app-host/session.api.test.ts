import { and, eq, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionCookieOf } from '../../../../test/support/accounts';
import { startTestApp, type TestApp } from '../../../../test/support/app';
import { runJobNow } from '../../../../test/support/jobs';
import { events, members, organizations, sessions, users } from '../db/schema/index';
import { hashToken } from '../http/tokens';
import { eventsRetentionJob } from '../jobs/events-retention';
import { buildAppHost } from './app-host';

const CANARY = 'canary-Session-Pw-3b8d41e0';
const EMAIL = 'dana@example.com';
const without = (r: { json(): any }) => ({ ...r.json().error, request_id: undefined });

// vitest projects do not inherit the root timeouts, so this suite states its own.
describe('app host sessions', { timeout: 60_000 }, () => {
  let t: TestApp;
  let host: FastifyInstance;
  let owner: { api_key: string; personal_access_token: string };
  let acmeId: string;
  let danaId: string;
  const signIn = (email: string, password: string, h = host) =>
    h.inject({ method: 'POST', url: '/session', payload: { email, password } });
  const whoAmI = (cookie: string) =>
    host.inject({ method: 'GET', url: '/session', cookies: { sluice_session: cookie } });
  const sessionsOfDana = () => t.rt.deps.db.select().from(sessions).where(eq(sessions.userId, danaId));

  beforeAll(async () => {
    t = await startTestApp();
    host = await buildAppHost(t.rt.deps);
    owner = await t.bootstrap('acme');
    const up = await t.call('POST', '/users', { body: { email: EMAIL, password: CANARY, name: 'Dana' } });
    expect(up.statusCode).toBe(201);
    // Dana belongs to acme, so her sign-ins have an organization to be audited in.
    const db = t.rt.deps.db;
    const [dana] = await db.select().from(users).where(eq(users.email, EMAIL));
    const [acme] = await db.select().from(organizations).where(eq(organizations.slug, 'acme'));
    acmeId = acme.id;
    danaId = dana.id;
    await db.insert(members).values({ organizationId: acme.id, userId: dana.id, role: 'developer' });
  }, 120_000);
  afterAll(async () => {
    await host?.close();
    await t?.close();
  });

  it('signs in with a Lax HttpOnly cookie that works on the app host only', async () => {
    const res = await signIn('DANA@example.com', CANARY);
    expect(res.statusCode).toBe(201);
    expect(res.json().user).toMatchObject({ email: EMAIL, name: 'Dana' });
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(/^sluice_session=/);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(res.json().csrf_token).toMatch(/^[\w-]{43}$/);
    expect(setCookie).toMatch(/Max-Age=43200/);
    expect(setCookie).toMatch(/Path=\//);
    // Served over http here, so the cookie cannot be Secure (see the https case below).
    expect(setCookie).not.toMatch(/Secure/i);
    const cookie = sessionCookieOf(res);
    // Only the hash of the cookie's secret is stored.
    const stored = await t.rt.deps.db
      .select()
      .from(sessions)
      .where(eq(sessions.tokenHash, hashToken(cookie)));
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(await sessionsOfDana())).not.toContain(cookie);
    expect(res.json().expires_at).toBe(stored[0].expiresAt.toISOString());
    expect(stored[0].expiresAt.getTime() - Date.now()).toBeGreaterThan(11.9 * 3600_000);

    const who = await host.inject({ method: 'GET', url: '/session', cookies: { sluice_session: cookie } });
    expect(who.statusCode).toBe(200);
    expect(who.json().user.email).toBe(EMAIL);

    // The API host looks only at bearer tokens: the session cookie is worth nothing there.
    const api = await t.call('GET', '/users/me', { headers: { cookie: `sluice_session=${cookie}` } });
    expect(api.statusCode).toBe(401);
    expect(api.json().error.code).toBe('UNAUTHENTICATED');

    const tampered = `${cookie.slice(0, -2)}${cookie.endsWith('A') ? 'BB' : 'AA'}`;
    const forged = await host.inject({
      method: 'GET',
      url: '/session',
      cookies: { sluice_session: tampered },
    });
    expect(forged.statusCode).toBe(401);
    expect((await host.inject({ method: 'GET', url: '/session' })).statusCode).toBe(401);

    const signedOut = await host.inject({
      method: 'DELETE',
      url: '/session',
      cookies: { sluice_session: cookie },
      headers: { 'x-csrf-token': res.json().csrf_token },
    });
    expect(signedOut.statusCode).toBe(204);
    expect(String(signedOut.headers['set-cookie'])).toMatch(/sluice_session=;.*Expires=Thu, 01 Jan 1970/);
    const signOuts = await t.rt.deps.db
      .select()
      .from(events)
      .where(and(eq(events.organizationId, acmeId), sql`${events.metadata}->>'outcome' = 'sign_out'`));
    expect(signOuts).toHaveLength(1);
    expect(signOuts[0]).toMatchObject({
      eventClass: 'security_audit',
      actorType: 'user',
      entityType: 'member',
    });
  });

  it('signing out revokes the session on the server: a copied cookie stops working at once', async () => {
    const signedIn = await signIn(EMAIL, CANARY);
    const copy = sessionCookieOf(signedIn);
    expect((await whoAmI(copy)).statusCode).toBe(200);
    // Without the session's CSRF token, signing out is refused like any other state change.
    const forged = await host.inject({
      method: 'DELETE',
      url: '/session',
      cookies: { sluice_session: copy },
    });
    expect(forged.statusCode).toBe(403);
    // The browser signs out; someone holding a copy of the same cookie keeps sending it.
    const out = await host.inject({
      method: 'DELETE',
      url: '/session',
      cookies: { sluice_session: copy },
      headers: { 'x-csrf-token': signedIn.json().csrf_token },
    });
    expect(out.headers['clear-site-data']).toContain('storage');
    expect(out.statusCode).toBe(204);
    expect((await whoAmI(copy)).statusCode).toBe(401);
    const mint = await host.inject({
      method: 'POST',
      url: '/session/personal-access-tokens',
      cookies: { sluice_session: copy },
      payload: { name: 'stolen' },
    });
    expect(mint.statusCode).toBe(401);
    const rows = await t.rt.deps.db
      .select()
      .from(sessions)
      .where(eq(sessions.tokenHash, hashToken(copy)));
    expect(rows).toHaveLength(0);
    // Signing out again (or without a session) is harmless.
    const again = await host.inject({ method: 'DELETE', url: '/session', cookies: { sluice_session: copy } });
    expect(again.statusCode).toBe(204);
    expect((await host.inject({ method: 'DELETE', url: '/session' })).statusCode).toBe(204);
  });

  it('records use at most once a minute and refuses expired sessions', async () => {
    const cookie = sessionCookieOf(await signIn(EMAIL, CANARY));
    const db = t.rt.deps.db;
    const byHash = eq(sessions.tokenHash, hashToken(cookie));
    expect((await whoAmI(cookie)).statusCode).toBe(200);
    const [first] = await db.select().from(sessions).where(byHash);
    expect(first.lastSeenAt).toBeInstanceOf(Date);
    expect((await whoAmI(cookie)).statusCode).toBe(200);
    const [second] = await db.select().from(sessions).where(byHash);
    expect(second.lastSeenAt).toEqual(first.lastSeenAt);
    // Last seen two minutes ago: the next use writes again.
    await db.update(sessions).set({ lastSeenAt: sql`now() - interval '2 minutes'` }).where(byHash);
    expect((await whoAmI(cookie)).statusCode).toBe(200);
    const [third] = await db.select().from(sessions).where(byHash);
    expect(third.lastSeenAt!.getTime()).toBeGreaterThan(Date.now() - 30_000);

    await db.update(sessions).set({ expiresAt: sql`now() - interval '1 second'` }).where(byHash);
    expect((await whoAmI(cookie)).statusCode).toBe(401);
  });

  it('the hourly retention job deletes expired sessions and keeps live ones', async () => {
    const live = sessionCookieOf(await signIn(EMAIL, CANARY));
    const db = t.rt.deps.db;
    await db.insert(sessions).values([
      { userId: danaId, tokenHash: hashToken('expired-1'), expiresAt: sql`now() - interval '1 hour'` },
      { userId: danaId, tokenHash: hashToken('expired-2'), expiresAt: sql`now() - interval '1 day'` },
    ]);
    await runJobNow(t.rt.deps, eventsRetentionJob, {});
    const left = await db.select().from(sessions).where(sql`${sessions.expiresAt} < now()`);
    expect(left).toHaveLength(0);
    expect((await whoAmI(live)).statusCode).toBe(200);
  });

  it('marks the cookie Secure when the public URL is https', async () => {
    const config = { ...t.rt.deps.config, publicUrl: 'https://sluice.example.com' };
    const https = await buildAppHost({ ...t.rt.deps, config });
    try {
      const res = await signIn(EMAIL, CANARY, https);
      expect(res.statusCode).toBe(201);
      expect(String(res.headers['set-cookie'])).toMatch(/;\s*Secure/i);
      // __Host- binds the cookie to this exact host: no sibling subdomain can set it.
      expect(String(res.headers['set-cookie'])).toMatch(/^__Host-sluice_session=/);
    } finally {
      await https.close();
    }
  });

  it('mints a personal access token for the signed-in user', async () => {
    const signedIn = await signIn(EMAIL, CANARY);
    const cookie = sessionCookieOf(signedIn);
    const res = await host.inject({
      method: 'POST',
      url: '/session/personal-access-tokens',
      cookies: { sluice_session: cookie },
      headers: { 'x-csrf-token': signedIn.json().csrf_token },
      payload: { name: 'first' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().token).toMatch(/^slc_pat_/);
    const me = await t.call('GET', '/users/me', { token: res.json().token });
    expect(me.json().email).toBe(EMAIL);
    const anonymous = await host.inject({
      method: 'POST',
      url: '/session/personal-access-tokens',
      payload: { name: 'x' },
    });
    expect(anonymous.statusCode).toBe(401);
  });

  it('refuses bearer tokens before anything else', async () => {
    const cookie = sessionCookieOf(await signIn(EMAIL, CANARY));
    for (const token of [owner.personal_access_token, owner.api_key]) {
      const res = await host.inject({
        method: 'GET',
        url: '/session',
        headers: { authorization: `Bearer ${token}` },
        cookies: { sluice_session: cookie },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('API_TOKEN_NOT_ACCEPTED');
    }
    expect(t.logs()).not.toContain(owner.personal_access_token);
  });

  it('answers a wrong password and an unknown address alike, and audits the attempts', async () => {
    const wrong = await signIn(EMAIL, 'not-the-password-at-all');
    const unknown = await signIn('nobody@example.com', 'not-the-password-at-all');
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(without(wrong)).toEqual(without(unknown));
    expect(wrong.headers['set-cookie']).toBeUndefined();

    const audit = await t.rt.deps.db
      .select()
      .from(events)
      .where(
        and(eq(events.organizationId, acmeId), eq(events.action, 'read'), eq(events.entityType, 'member')),
      );
    expect(audit.every((e) => e.eventClass === 'security_audit')).toBe(true);
    const outcomes = audit.map((e) => (e.metadata as any).outcome);
    expect(outcomes).toContain('sign_in');
    expect(outcomes).toContain('sign_in_failed');
    expect(audit.find((e) => (e.metadata as any).outcome === 'sign_in_failed')).toMatchObject({
      actorType: 'unknown',
      actorSlug: null,
    });
    expect(audit.find((e) => (e.metadata as any).outcome === 'sign_in')?.actorType).toBe('user');
  });

  it('ends sessions when the password changes', async () => {
    const signedIn = await signIn(EMAIL, CANARY);
    const cookie = sessionCookieOf(signedIn);
    const pat = await host.inject({
      method: 'POST',
      url: '/session/personal-access-tokens',
      cookies: { sluice_session: cookie },
      headers: { 'x-csrf-token': signedIn.json().csrf_token },
      payload: { name: 'rotate' },
    });
    const changed = await t.call('PATCH', '/users/me', {
      token: pat.json().token,
      body: { password: `${CANARY}-2`, current_password: CANARY },
    });
    expect(changed.statusCode).toBe(200);
    const stale = await host.inject({ method: 'GET', url: '/session', cookies: { sluice_session: cookie } });
    expect(stale.statusCode).toBe(401);
    // Every session of the user is gone, not only this one; the new password signs in again.
    expect(await sessionsOfDana()).toHaveLength(0);
    expect((await signIn(EMAIL, `${CANARY}-2`)).statusCode).toBe(201);
    // A rename is not a credential change: sessions stay.
    const fresh = sessionCookieOf(await signIn(EMAIL, `${CANARY}-2`));
    const renamed = await t.call('PATCH', '/users/me', { token: pat.json().token, body: { name: 'Dana B' } });
    expect(renamed.statusCode).toBe(200);
    expect((await whoAmI(fresh)).statusCode).toBe(200);
  });

  it('rate limits sign-in per address with Retry-After', async () => {
    const config = { ...t.rt.deps.config, rateLimit: { ...t.rt.deps.config.rateLimit, publicPerAddress: 3 } };
    const strict = await buildAppHost({ ...t.rt.deps, config });
    try {
      for (let i = 0; i < 3; i++)
        expect((await signIn(EMAIL, 'wrong-password-x', strict)).statusCode).toBe(401);
      const limited = await signIn(EMAIL, 'wrong-password-x', strict);
      expect(limited.statusCode).toBe(429);
      expect(limited.json().error.code).toBe('RATE_LIMITED');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(limited.headers['ratelimit-limit']).toBe('3');
    } finally {
      await strict.close();
    }
  });

  it('never writes the password to a log line or an event', async () => {
    const all = await t.rt.deps.db.select().from(events);
    expect(JSON.stringify(all)).not.toContain(CANARY);
    expect(t.logs()).not.toContain(CANARY);
  });
});
