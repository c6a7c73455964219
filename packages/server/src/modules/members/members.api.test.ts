import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { addMember, createUser, type TestUser } from '../../../../../test/support/users';
import { events } from '../../db/schema/index';

// The vitest projects do not inherit the root timeouts, and the machine is shared.
describe('members', { timeout: 30_000 }, () => {
  let t: TestApp;
  let owner: { slug: string; token: string };
  let key: string;
  let admin: TestUser;
  let dev: TestUser;
  let viewer: TestUser;
  beforeAll(async () => {
    t = await startTestApp();
    const b = await t.bootstrap('acme', 'owner@example.com');
    owner = { slug: b.user_slug, token: b.personal_access_token };
    key = b.api_key;
    admin = await createUser(t, { email: 'admin@example.com', name: 'Ada Admin' });
    dev = await createUser(t, { email: 'dev@example.com' });
    viewer = await createUser(t, { email: 'viewer@example.com' });
    await addMember(t, 'acme', admin, 'admin');
    await addMember(t, 'acme', dev, 'developer');
    await addMember(t, 'acme', viewer, 'viewer');
  }, 120_000);
  afterAll(() => t?.close());

  const patch = (token: string, slug: string, role: string) =>
    t.call('PATCH', `/organizations/acme/members/${slug}`, { token, body: { role } });

  it('lists and reads members', async () => {
    const res = await t.call('GET', '/organizations/acme/members?sort_by=member_email&order=asc', {
      token: viewer.token,
    });
    expect(res.statusCode).toBe(200);
    const list = res.json();
    expect(list.members.map((m: any) => m.email)).toEqual([
      'admin@example.com',
      'dev@example.com',
      'owner@example.com',
      'viewer@example.com',
    ]);
    expect(list.members[0]).toEqual({
      user_slug: admin.slug,
      email: 'admin@example.com',
      name: 'Ada Admin',
      role: 'admin',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const page = (
      await t.call('GET', '/organizations/acme/members?limit=3&sort_by=member_email&order=asc', {
        token: key,
      })
    ).json();
    expect(page.has_more).toBe(true);
    const rest = (
      await t.call(
        'GET',
        `/organizations/acme/members?limit=3&sort_by=member_email&order=asc&cursor=${page.next_cursor}`,
        { token: key },
      )
    ).json();
    expect(rest.members.map((m: any) => m.email)).toEqual(['viewer@example.com']);
    const one = await t.call('GET', `/organizations/acme/members/${dev.slug}`, { token: key });
    expect(one.json().role).toBe('developer');
    expect((await t.call('GET', '/organizations/acme/members/nobody', { token: key })).statusCode).toBe(404);
  });

  it('changes roles within the caller’s own power', async () => {
    // A viewer sees members, so lacking members.manage is a 403 rather than a 404.
    expect((await patch(viewer.token, dev.slug, 'viewer')).statusCode).toBe(403);
    const unknown = await patch(admin.token, dev.slug, 'wizard');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.code).toBe('VALIDATION_FAILED');

    const ok = await patch(admin.token, dev.slug, 'operator');
    expect(ok.statusCode).toBe(200);
    expect(ok.json().role).toBe('operator');

    // Only an owner makes or unmakes owners.
    expect((await patch(admin.token, dev.slug, 'owner')).statusCode).toBe(403);
    expect((await patch(admin.token, owner.slug, 'admin')).statusCode).toBe(403);

    // A custom role holding organizations.delete is stronger than admin.
    const strong = await t.call('POST', '/organizations/acme/roles', {
      token: owner.token,
      body: { name: 'Closer', permissions: ['organizations.read', 'organizations.delete'] },
    });
    expect(strong.statusCode).toBe(201);
    const refused = await patch(admin.token, dev.slug, 'closer');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('FORBIDDEN');
    expect((await patch(owner.token, dev.slug, 'closer')).statusCode).toBe(200);
    // …and so a member holding it is out of an admin's reach.
    expect((await patch(admin.token, dev.slug, 'viewer')).statusCode).toBe(403);
    expect((await patch(owner.token, dev.slug, 'developer')).statusCode).toBe(200);

    const audit = await t.rt.deps.db
      .select()
      .from(events)
      .where(
        and(eq(events.entityType, 'member'), eq(events.entitySlug, dev.slug), eq(events.action, 'update')),
      );
    expect(audit.filter((e) => e.eventClass === 'security_audit')).toHaveLength(3);
    expect(audit[0].metadata).toMatchObject({ from_role: 'developer', to_role: 'operator' });
  });

  it('never leaves the organization without an owner', async () => {
    const demote = await patch(owner.token, owner.slug, 'admin');
    expect(demote.statusCode).toBe(409);
    expect(demote.json().error.code).toBe('CONFLICT');
    const leave = await t.call('DELETE', `/organizations/acme/members/${owner.slug}`, { token: owner.token });
    expect(leave.statusCode).toBe(409);

    // With a second owner, the first may step down.
    expect((await patch(owner.token, admin.slug, 'owner')).statusCode).toBe(200);
    expect((await patch(owner.token, owner.slug, 'admin')).statusCode).toBe(200);
    // Now the former owner is an admin and cannot touch the remaining owner.
    const removeOwner = await t.call('DELETE', `/organizations/acme/members/${admin.slug}`, {
      token: owner.token,
    });
    expect(removeOwner.statusCode).toBe(403);
    const lastLeaves = await t.call('DELETE', `/organizations/acme/members/${admin.slug}`, {
      token: admin.token,
    });
    expect(lastLeaves.statusCode).toBe(409);
    expect((await patch(admin.token, owner.slug, 'owner')).statusCode).toBe(200);
  });

  it('removes members with members.manage and lets anyone leave', async () => {
    const other = await createUser(t);
    await addMember(t, 'acme', other, 'viewer');
    // A developer sees members but cannot remove someone else.
    expect(
      (await t.call('DELETE', `/organizations/acme/members/${other.slug}`, { token: dev.token })).statusCode,
    ).toBe(403);
    // A viewer leaves on their own.
    const left = await t.call('DELETE', `/organizations/acme/members/${viewer.slug}`, {
      token: viewer.token,
    });
    expect(left.statusCode).toBe(204);
    expect((await t.call('GET', '/organizations/acme', { token: viewer.token })).statusCode).toBe(404);

    const removed = await t.call('DELETE', `/organizations/acme/members/${other.slug}`, { token: key });
    expect(removed.statusCode).toBe(204);
    expect(
      (await t.call('GET', `/organizations/acme/members/${other.slug}`, { token: key })).statusCode,
    ).toBe(404);
    // Outsiders learn nothing: the organization itself is 404.
    expect(
      (await t.call('DELETE', `/organizations/acme/members/${dev.slug}`, { token: other.token })).statusCode,
    ).toBe(404);

    const gone = await t.rt.deps.db
      .select()
      .from(events)
      .where(and(eq(events.entityType, 'member'), eq(events.action, 'delete')));
    expect(gone.map((e) => `${e.eventClass}:${e.entitySlug}:${(e.metadata as any).left}`).sort()).toEqual(
      [
        `activity:${viewer.slug}:true`,
        `activity:${other.slug}:false`,
        `security_audit:${viewer.slug}:true`,
        `security_audit:${other.slug}:false`,
      ].sort(),
    );
  });
});
