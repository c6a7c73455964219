import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { addMember, createUser, type TestUser } from '../../../../../test/support/users';
import { events } from '../../db/schema/index';
import { allPermissions, builtInRoles } from '../../permissions';

// The vitest projects do not inherit the root timeouts, and the machine is shared.
describe('roles and permissions', { timeout: 30_000 }, () => {
  let t: TestApp;
  let owner: string;
  let key: string;
  let admin: TestUser;
  beforeAll(async () => {
    t = await startTestApp();
    const b = await t.bootstrap('acme');
    owner = b.personal_access_token;
    key = b.api_key;
    admin = await createUser(t);
    await addMember(t, 'acme', admin, 'admin');
  }, 120_000);
  afterAll(() => t?.close());

  const create = (token: string, body: unknown) =>
    t.call('POST', '/organizations/acme/roles', { token, body });

  it('lists the permission catalog to any principal', async () => {
    const res = await t.call('GET', '/permissions', { token: key });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ has_more: false, next_cursor: null, prev_cursor: null });
    const names = res.json().permissions.map((p: any) => p.name);
    expect(names).toEqual(allPermissions);
    expect(res.json().permissions).toContainEqual({
      name: 'pipelines.deploy',
      description: 'Deploy pipeline versions',
    });
    expect((await t.call('GET', '/permissions')).statusCode).toBe(401);
  });

  it('lists the built-in roles with the organization’s creation time', async () => {
    const org = (await t.call('GET', '/organizations/acme', { token: key })).json();
    const res = await t.call('GET', '/organizations/acme/roles?order=asc', { token: key });
    expect(res.statusCode).toBe(200);
    const roles = res.json().roles;
    expect(roles.map((r: any) => r.slug).sort()).toEqual([
      'admin',
      'developer',
      'operator',
      'owner',
      'viewer',
    ]);
    for (const r of roles) {
      expect(r).toMatchObject({ built_in: true, created_at: org.created_at, updated_at: org.created_at });
    }
    const viewer = await t.call('GET', '/organizations/acme/roles/viewer', { token: key });
    expect(viewer.json()).toMatchObject({
      slug: 'viewer',
      name: 'Viewer',
      permissions: builtInRoles.viewer.permissions,
    });
    expect((await t.call('GET', '/organizations/acme/roles/nope', { token: key })).statusCode).toBe(404);
  });

  it('creates, changes and deletes custom roles', async () => {
    const res = await create(admin.token, {
      name: 'Deployer',
      description: 'Ships pipelines',
      permissions: ['pipelines.deploy', 'pipelines.read', 'pipelines.read'],
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      slug: 'deployer',
      name: 'Deployer',
      description: 'Ships pipelines',
      permissions: ['pipelines.read', 'pipelines.deploy'],
      built_in: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const patched = await t.call('PATCH', '/organizations/acme/roles/deployer', {
      token: admin.token,
      body: { permissions: ['pipelines.read', 'pipelines.deploy', 'pipelines.execute'], description: null },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({
      description: null,
      permissions: ['pipelines.read', 'pipelines.deploy', 'pipelines.execute'],
    });
    expect((await t.call('GET', '/organizations/acme/roles/deployer', { token: key })).json()).toEqual(
      patched.json(),
    );
    const del = await t.call('DELETE', '/organizations/acme/roles/deployer', { token: admin.token });
    expect(del.statusCode).toBe(204);
    expect((await t.call('GET', '/organizations/acme/roles/deployer', { token: key })).statusCode).toBe(404);

    const audit = await t.rt.deps.db
      .select()
      .from(events)
      .where(and(eq(events.entityType, 'role'), eq(events.entitySlug, 'deployer')));
    expect(audit.map((e) => `${e.eventClass}:${e.action}`).sort()).toEqual([
      'activity:create',
      'activity:delete',
      'activity:update',
      'security_audit:create',
      'security_audit:delete',
      'security_audit:update',
    ]);
  });

  it('validates permissions, slugs and built-ins', async () => {
    const unknown = await create(owner, { name: 'Odd', permissions: ['pipelines.fly'] });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.code).toBe('VALIDATION_FAILED');
    expect(unknown.json().error.validation_errors[0].path).toBe('permissions.0');
    const clash = await create(owner, { name: 'Admin 2', slug: 'admin', permissions: [] });
    expect(clash.statusCode).toBe(409);
    // A name that slugifies to a built-in gets a suffix instead.
    const derived = await create(owner, { name: 'Admin', permissions: [] });
    expect(derived.statusCode).toBe(201);
    expect(derived.json().slug).toMatch(/^admin-[a-z0-9]{6}$/);
    const dup = await create(owner, { name: 'x', slug: derived.json().slug, permissions: [] });
    expect(dup.statusCode).toBe(409);

    for (const method of ['PATCH', 'DELETE']) {
      const res = await t.call(method, '/organizations/acme/roles/owner', {
        token: owner,
        body: method === 'PATCH' ? { name: 'Boss' } : undefined,
      });
      expect(res.statusCode).toBe(409);
      expect(res.json().error.message).toMatch(/built-in/);
    }
  });

  it('never lets a caller create or edit a role beyond their own permissions', async () => {
    const stronger = await create(admin.token, { name: 'Closer', permissions: ['organizations.delete'] });
    expect(stronger.statusCode).toBe(403);
    const ownerMade = await create(owner, {
      name: 'Closer',
      permissions: ['organizations.read', 'organizations.delete'],
    });
    expect(ownerMade.statusCode).toBe(201);
    const edit = await t.call('PATCH', '/organizations/acme/roles/closer', {
      token: admin.token,
      body: { name: 'Closer 2' },
    });
    expect(edit.statusCode).toBe(403);
    const viewer = await createUser(t);
    await addMember(t, 'acme', viewer, 'viewer');
    // A viewer can read roles, so managing them is refused with 403, not hidden.
    expect((await create(viewer.token, { name: 'v', permissions: [] })).statusCode).toBe(403);
  });

  it('refuses to delete a role still in use', async () => {
    await create(owner, { name: 'Reader', permissions: ['organizations.read', 'pipelines.read'] });
    const user = await createUser(t, { email: 'reader@example.com' });
    await addMember(t, 'acme', user, 'reader');
    const byMember = await t.call('DELETE', '/organizations/acme/roles/reader', { token: owner });
    expect(byMember.statusCode).toBe(409);
    expect(byMember.json().error.message).toMatch(/1 member/);
    // The role's permissions apply to its holder.
    expect((await t.call('GET', '/organizations/acme', { token: user.token })).statusCode).toBe(200);
    expect((await t.call('GET', '/organizations/acme/members', { token: user.token })).statusCode).toBe(404);
    await t.call('PATCH', `/organizations/acme/members/${user.slug}`, {
      token: owner,
      body: { role: 'viewer' },
    });

    const apiKey = await t.call('POST', '/organizations/acme/api-keys', {
      token: owner,
      body: { name: 'reader key', role: 'reader' },
    });
    expect(apiKey.statusCode).toBe(201);
    // A key holding a custom role gets that role's stored permissions, read on every request:
    // a change to the role applies to the key's next call.
    const keyToken = apiKey.json().token as string;
    expect((await t.call('GET', '/organizations/acme', { token: keyToken })).statusCode).toBe(200);
    expect((await t.call('GET', '/organizations/acme/members', { token: keyToken })).statusCode).toBe(404);
    const widened = await t.call('PATCH', '/organizations/acme/roles/reader', {
      token: owner,
      body: { permissions: ['organizations.read', 'pipelines.read', 'members.read'] },
    });
    expect(widened.statusCode).toBe(200);
    expect((await t.call('GET', '/organizations/acme/members', { token: keyToken })).statusCode).toBe(200);
    const byKey = await t.call('DELETE', '/organizations/acme/roles/reader', { token: owner });
    expect(byKey.json().error.message).toMatch(/1 API key/);
    await t.call('POST', '/organizations/acme/api-keys/reader-key:revoke', { token: owner });

    const inv = await t.call('POST', '/organizations/acme/invitations', {
      token: owner,
      body: { email: 'future@example.com', role: 'reader' },
    });
    expect(inv.statusCode).toBe(201);
    const byInvitation = await t.call('DELETE', '/organizations/acme/roles/reader', { token: owner });
    expect(byInvitation.json().error.message).toMatch(/1 pending invitation/);
    await t.call('DELETE', `/organizations/acme/invitations/${inv.json().slug}`, { token: owner });

    expect((await t.call('DELETE', '/organizations/acme/roles/reader', { token: owner })).statusCode).toBe(
      204,
    );
  });

  it('pages built-in and custom roles together', async () => {
    const all = (
      await t.call('GET', '/organizations/acme/roles?limit=100&sort_by=role_name&order=asc', { token: key })
    )
      .json()
      .roles.map((r: any) => r.slug);
    expect(all.length).toBeGreaterThanOrEqual(7);
    const walked: string[] = [];
    let cursor: string | null = null;
    let last: any;
    do {
      const qs = `limit=2&sort_by=role_name&order=asc${cursor ? `&cursor=${cursor}` : ''}`;
      last = (await t.call('GET', `/organizations/acme/roles?${qs}`, { token: key })).json();
      walked.push(...last.roles.map((r: any) => r.slug));
      cursor = last.next_cursor;
    } while (cursor);
    expect(walked).toEqual(all);
    expect(last.has_more).toBe(false);
    // And back from the last page.
    const prev = (
      await t.call(
        'GET',
        `/organizations/acme/roles?limit=2&sort_by=role_name&order=asc&direction=prev&cursor=${last.prev_cursor}`,
        { token: key },
      )
    ).json();
    const end = all.length - last.roles.length;
    expect(prev.roles.map((r: any) => r.slug)).toEqual(all.slice(end - 2, end));
    const newest = (await t.call('GET', '/organizations/acme/roles?limit=1', { token: key })).json();
    expect(newest.roles[0].built_in).toBe(false);
    const bad = await t.call('GET', '/organizations/acme/roles?cursor=zzz', { token: key });
    expect(bad.statusCode).toBe(400);
  });
});
