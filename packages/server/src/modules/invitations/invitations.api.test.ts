import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpPeer, startSmtpPeer } from '../../../../../test/peers/smtp';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { addMember, createUser, type TestUser } from '../../../../../test/support/users';
import { events, invitations } from '../../db/schema/index';

// The vitest projects do not inherit the root timeouts, and the machine is shared.
describe('invitations', { timeout: 30_000 }, () => {
  let smtp: SmtpPeer;
  let t: TestApp;
  let owner: { slug: string; token: string };
  let key: string;
  let admin: TestUser;
  beforeAll(async () => {
    smtp = await startSmtpPeer();
    t = await startTestApp({ env: { SLUICE_SMTP_URL: smtp.url }, worker: true });
    const b = await t.bootstrap('acme');
    owner = { slug: b.user_slug, token: b.personal_access_token };
    key = b.api_key;
    admin = await createUser(t, { email: 'admin@example.com' });
    await addMember(t, 'acme', admin, 'admin');
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  const invite = (token: string, email: string, role: string) =>
    t.call('POST', '/organizations/acme/invitations', { token, body: { email, role } });
  const respond = (token: string, slug: string, answer: 'accept' | 'decline') =>
    t.call('POST', `/invitations/${slug}:${answer}`, { token });

  it('mails an invitation that the invitee accepts to become a member', async () => {
    const invitee = await createUser(t, { email: 'invitee@example.com' });
    const before = Date.now();
    const res = await invite(owner.token, 'Invitee@Example.com', 'developer');
    expect(res.statusCode).toBe(201);
    const inv = res.json();
    expect(inv).toEqual({
      slug: expect.stringMatching(/^inv-[a-z0-9]{16}$/),
      email: 'invitee@example.com',
      role: 'developer',
      status: 'pending',
      invited_by_user_slug: owner.slug,
      expires_at: expect.any(String),
      responded_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const ttl = Date.parse(inv.expires_at) - before;
    expect(ttl).toBeGreaterThan(7 * 86_400_000 - 60_000);
    expect(ttl).toBeLessThanOrEqual(7 * 86_400_000 + 60_000);

    const mail = await smtp.waitFor((m) => m.to.some((a) => a.includes('invitee@example.com')));
    expect(mail.text).toContain(`/invitations/${inv.slug}:accept`);

    const again = await invite(key, 'invitee@example.com', 'viewer');
    expect(again.statusCode).toBe(409);

    // Anyone but the invitee, even a member of the organization, cannot see it.
    expect((await respond(admin.token, inv.slug, 'accept')).statusCode).toBe(404);
    expect((await respond(key, inv.slug, 'accept')).statusCode).toBe(403);

    const accepted = await respond(invitee.token, inv.slug, 'accept');
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json()).toMatchObject({ slug: inv.slug, status: 'accepted' });
    expect(accepted.json().responded_at).toBeTruthy();
    const member = await t.call('GET', `/organizations/acme/members/${invitee.slug}`, { token: key });
    expect(member.json().role).toBe('developer');
    // The new member acts with the role at once.
    expect((await t.call('GET', '/organizations/acme', { token: invitee.token })).statusCode).toBe(200);
    expect((await respond(invitee.token, inv.slug, 'accept')).statusCode).toBe(409);

    const recorded = await t.rt.deps.db.select().from(events).where(eq(events.entitySlug, inv.slug));
    expect(recorded.map((e) => `${e.eventClass}:${e.action}`).sort()).toEqual([
      'activity:accept',
      'activity:create',
      'security_audit:accept',
      'security_audit:create',
    ]);
  });

  it('lets the invitee decline, and only with a verified address', async () => {
    const unverified = await createUser(t, { email: 'unverified@example.com', verified: false });
    const pending = (await invite(admin.token, 'unverified@example.com', 'viewer')).json();
    expect((await respond(unverified.token, pending.slug, 'accept')).statusCode).toBe(404);

    const decliner = await createUser(t, { email: 'decliner@example.com' });
    const inv = (await invite(admin.token, 'decliner@example.com', 'viewer')).json();
    const declined = await respond(decliner.token, inv.slug, 'decline');
    expect(declined.statusCode).toBe(200);
    expect(declined.json().status).toBe('declined');
    expect((await t.call('GET', '/organizations/acme', { token: decliner.token })).statusCode).toBe(404);
    expect((await respond(decliner.token, inv.slug, 'accept')).statusCode).toBe(409);
    // Declined, so a fresh invitation is possible.
    expect((await invite(admin.token, 'decliner@example.com', 'viewer')).statusCode).toBe(201);
  });

  it('revokes a pending invitation', async () => {
    const revokee = await createUser(t, { email: 'revokee@example.com' });
    const inv = (await invite(key, 'revokee@example.com', 'operator')).json();
    expect(inv.invited_by_user_slug).toBeNull();
    const del = await t.call('DELETE', `/organizations/acme/invitations/${inv.slug}`, { token: admin.token });
    expect(del.statusCode).toBe(204);
    const got = await t.call('GET', `/organizations/acme/invitations/${inv.slug}`, { token: key });
    expect(got.json().status).toBe('revoked');
    expect((await respond(revokee.token, inv.slug, 'accept')).statusCode).toBe(409);
    // Revoking twice is harmless.
    expect(
      (await t.call('DELETE', `/organizations/acme/invitations/${inv.slug}`, { token: key })).statusCode,
    ).toBe(204);
  });

  it('expires a pending invitation once, lazily', async () => {
    const late = await createUser(t, { email: 'late@example.com' });
    const inv = (await invite(key, 'late@example.com', 'viewer')).json();
    await t.rt.deps.db
      .update(invitations)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(invitations.slug, inv.slug));
    const got = await t.call('GET', `/organizations/acme/invitations/${inv.slug}`, { token: key });
    expect(got.json().status).toBe('expired');
    await t.call('GET', '/organizations/acme/invitations', { token: key });
    const accept = await respond(late.token, inv.slug, 'accept');
    expect(accept.statusCode).toBe(409);
    expect(accept.json().error.message).toMatch(/expired/);
    const expiries = await t.rt.deps.db
      .select()
      .from(events)
      .where(and(eq(events.entitySlug, inv.slug), eq(events.action, 'expire')));
    expect(expiries).toHaveLength(1);
    expect(expiries[0]).toMatchObject({ actorType: 'system', eventClass: 'activity' });
    // An expired invitation no longer blocks a new one.
    expect((await invite(key, 'late@example.com', 'viewer')).statusCode).toBe(201);
  });

  it('auto-accepts an invitation for an existing member without mail', async () => {
    const res = await invite(key, 'admin@example.com', 'viewer');
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ status: 'auto_accepted', email: 'admin@example.com' });
    expect(res.json().responded_at).toBeTruthy();
    const [event] = await t.rt.deps.db.select().from(events).where(eq(events.entitySlug, res.json().slug));
    expect(event.action).toBe('auto_accept');
    // The member's role is untouched.
    const member = await t.call('GET', `/organizations/acme/members/${admin.slug}`, { token: key });
    expect(member.json().role).toBe('admin');
    // Mail is sent in order: once a later invitation's mail is in, none came for this one.
    await invite(key, 'marker@example.com', 'viewer');
    await smtp.waitFor((m) => m.to.some((a) => a.includes('marker@example.com')));
    expect(smtp.messages.some((m) => m.text.includes(res.json().slug))).toBe(false);
  });

  it('refuses roles that do not exist or exceed the inviter', async () => {
    const unknown = await invite(admin.token, 'x@example.com', 'wizard');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.code).toBe('VALIDATION_FAILED');
    expect((await invite(admin.token, 'x@example.com', 'owner')).statusCode).toBe(403);
    const dev = await createUser(t);
    await addMember(t, 'acme', dev, 'developer');
    expect((await invite(dev.token, 'x@example.com', 'viewer')).statusCode).toBe(403);
    const bad = await invite(admin.token, 'not-an-email', 'viewer');
    expect(bad.statusCode).toBe(400);
  });

  it('filters and pages by status', async () => {
    const all = (await t.call('GET', '/organizations/acme/invitations?limit=100', { token: key })).json();
    const statuses = new Set(all.invitations.map((i: any) => i.status));
    expect([...statuses].sort()).toEqual([
      'accepted',
      'auto_accepted',
      'declined',
      'expired',
      'pending',
      'revoked',
    ]);
    for (const status of statuses) {
      const only = (
        await t.call('GET', `/organizations/acme/invitations?status=${status}&limit=100`, { token: key })
      ).json();
      expect(only.invitations.length).toBeGreaterThan(0);
      expect(only.invitations.every((i: any) => i.status === status)).toBe(true);
    }
    const bad = await t.call('GET', '/organizations/acme/invitations?status=lost', { token: key });
    expect(bad.statusCode).toBe(400);
    const byEmail = (
      await t.call('GET', '/organizations/acme/invitations?sort_by=invitation_email&order=asc&limit=2', {
        token: key,
      })
    ).json();
    expect(byEmail.has_more).toBe(true);
    const next = (
      await t.call(
        'GET',
        `/organizations/acme/invitations?sort_by=invitation_email&order=asc&limit=100&cursor=${byEmail.next_cursor}`,
        { token: key },
      )
    ).json();
    expect(next.invitations.length + 2).toBe(all.invitations.length);
  });
});
