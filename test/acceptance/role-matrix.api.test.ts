import { eq } from 'drizzle-orm';
import type { Response as InjectResponse } from 'light-my-request';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organizations, roles } from '../../packages/server/src/db/schema/index';
import { type RouteInfo, routeRegex } from '../../packages/server/src/http/route-table';
import { builtInRoles, type Permission, visibilityOf } from '../../packages/server/src/permissions';
import { startTestApp, type TestApp } from '../support/app';
import {
  bodyFor,
  fillUrl,
  insertApiKey,
  insertMember,
  label,
  manyCallsEnv,
  orgRoutes,
  printServerErrors,
} from './support';

// The vitest projects do not inherit the root timeouts, and these suites make many calls.
const slow = { timeout: 300_000 };

// Enforcement must match what each route declares: for every organization route and every role,
// a caller lacking the permission gets 404 (cannot even see the area) or 403 (can see, cannot act),
// and a caller holding it gets past the check.

const CUSTOM = 'auditor';
const customPermissions: Permission[] = ['organizations.read', 'api_keys.read'];
const roleNames = ['viewer', 'operator', 'developer', 'admin', 'owner', CUSTOM] as const;
type RoleName = (typeof roleNames)[number];
type Kind = 'api_key' | 'user';

function permissionsOf(role: RoleName): Set<Permission> {
  return new Set(role === CUSTOM ? customPermissions : builtInRoles[role].permissions);
}

type Expectation = 'allowed' | 'forbidden' | 'hidden';
function expectation(role: RoleName, permission: Permission): Expectation {
  const held = permissionsOf(role);
  if (held.has(permission)) return 'allowed';
  return held.has(visibilityOf(permission)) ? 'forbidden' : 'hidden';
}

/** Deleting the organization itself ends the org; those calls each get an org of their own. */
const isTerminal = (r: RouteInfo) => r.method === 'DELETE' && r.url === '/organizations/:organization';

/**
 * Organization routes that check their permission in the service rather than declaring it, with
 * the permission they enforce for a caller acting on someone else (the reason is in the route).
 * Anything else under an organization must declare `access.org(permission)`.
 */
const serviceChecked: Record<string, Permission> = {
  // Leaving needs only membership; removing another member needs members.manage.
  'DELETE /organizations/:organization/members/:user_slug': 'members.manage',
};

function permissionOf(r: RouteInfo): Permission {
  if (r.access?.kind === 'org') return r.access.permission;
  const p = serviceChecked[label(r)];
  if (!p) throw new Error(`${label(r)} is under an organization but declares ${JSON.stringify(r.access)}`);
  return p;
}

describe('role matrix', slow, () => {
  let t: TestApp;
  let ownerKey: string;
  let orgId: string;
  let orgCounter = 0;
  const tokens = {} as Record<RoleName, Record<Kind, string>>;

  /** API key and member PAT for every role in an organization (custom role included). */
  async function seedPrincipals(organizationId: string, prefix: string, only?: RoleName) {
    await t.rt.deps.db
      .insert(roles)
      .values({ organizationId, slug: CUSTOM, name: 'Auditor', permissions: customPermissions });
    const out = {} as Record<RoleName, Record<Kind, string>>;
    for (const role of only ? [only] : roleNames) {
      const key = await insertApiKey(t, organizationId, {
        slug: `${prefix}${role}-key`,
        role,
        canManageApiKeys: permissionsOf(role).has('api_keys.manage'),
      });
      const user = await insertMember(t, organizationId, `${prefix}${role}-user`, role);
      out[role] = { api_key: key.token, user: user.pat };
    }
    return out;
  }

  beforeAll(async () => {
    t = await startTestApp({ env: manyCallsEnv });
    ownerKey = (await t.bootstrap('acme')).api_key;
    const [org] = await t.rt.deps.db.select().from(organizations).where(eq(organizations.slug, 'acme'));
    orgId = org.id;
    Object.assign(tokens, await seedPrincipals(orgId, ''));
  }, slow.timeout);
  afterAll(async () => {
    printServerErrors(t);
    await t?.close();
  }, slow.timeout);

  function check(res: InjectResponse, want: Expectation, ctx: string, declared = true) {
    const body = res.body ? res.json() : {};
    const message = body?.error?.message;
    ctx = `${ctx}: ${res.statusCode} ${res.body}`;
    expect(res.statusCode, ctx).not.toBe(401);
    expect(res.statusCode, ctx).toBeLessThan(500);
    if (want === 'hidden') {
      expect(res.statusCode, ctx).toBe(404);
      expect(body.error.code, ctx).toBe('NOT_FOUND');
      // A service-side check may name the resource it hides; the hooks' answer names nothing.
      if (declared) expect(message, ctx).toBe('resource not found');
    } else if (want === 'forbidden') {
      expect(res.statusCode, ctx).toBe(403);
      expect(body.error.code, ctx).toBe('FORBIDDEN');
    } else {
      expect(res.statusCode, ctx).not.toBe(403);
      if (res.statusCode === 404) {
        // A sub-resource that does not exist names itself; the tenancy and visibility 404s do not.
        expect(['resource not found', 'organization not found'], ctx).not.toContain(message);
      }
    }
  }

  // One test per role: vitest's worker RPC times out when a single test runs past 60 s.
  for (const role of roleNames) {
    it(`every organization route enforces exactly the permission it declares, for ${role}`, async () => {
      const routes = orgRoutes(t.app.routeTable).filter((x) => !isTerminal(x));
      expect(routes.length).toBeGreaterThan(0);
      let calls = 0;
      for (const r of routes) {
        const permission = permissionOf(r);
        const url = fillUrl(r.url, (p) => (p === 'organization' ? 'acme' : 'does-not-exist'));
        for (const kind of ['api_key', 'user'] as const) {
          const res = await t.call(r.method, url, { token: tokens[role][kind], body: bodyFor(r.method) });
          const ctx = `${role} ${kind} → ${label(r)} (${permission})`;
          check(res, expectation(role, permission), ctx, r.access?.kind === 'org');
          calls++;
        }
      }
      expect(calls).toBe(routes.length * 2);
    });
  }

  it('deleting the organization itself follows its declared permission, for every role', async () => {
    // Each call gets an organization of its own, since a successful one ends it.
    for (const r of orgRoutes(t.app.routeTable).filter(isTerminal)) {
      const permission = permissionOf(r);
      for (const role of roleNames) {
        for (const kind of ['api_key', 'user'] as const) {
          const slug = `doomed-${++orgCounter}`;
          const [org] = await t.rt.deps.db.insert(organizations).values({ slug, name: slug }).returning();
          const own = await seedPrincipals(org.id, `${slug}-`, role);
          const res = await t.call(
            r.method,
            fillUrl(r.url, () => slug),
            {
              token: own[role][kind],
              body: bodyFor(r.method),
            },
          );
          check(res, expectation(role, permission), `${role} ${kind} → ${label(r)} (${permission})`);
        }
      }
    }
  });

  it('representative operations succeed exactly when the role holds the declared permission', async () => {
    let n = 0;
    const ops: { method: string; path: string; body?: () => unknown }[] = [
      { method: 'GET', path: '/organizations/acme' },
      { method: 'GET', path: '/organizations/acme/api-keys' },
      {
        method: 'POST',
        path: '/organizations/acme/api-keys',
        body: () => ({ name: `op key ${++n}`, role: 'viewer' }),
      },
      { method: 'GET', path: '/organizations/acme/members' },
      { method: 'GET', path: '/organizations/acme/invitations' },
      { method: 'GET', path: '/organizations/acme/roles' },
      {
        method: 'POST',
        path: '/organizations/acme/roles',
        body: () => ({ name: `op role ${++n}`, permissions: ['organizations.read'] }),
      },
      { method: 'PATCH', path: `/organizations/acme/roles/${CUSTOM}`, body: () => ({ name: 'Auditor' }) },
      { method: 'GET', path: '/organizations/acme/events' },
      { method: 'GET', path: '/organizations/acme/security-audit-events' },
    ];
    let exercised = 0;
    for (const op of ops) {
      const route = t.app.routeTable.find((r) => r.method === op.method && routeRegex(r.url).test(op.path));
      if (!route) continue;
      exercised++;
      const permission = permissionOf(route);
      for (const role of roleNames) {
        for (const kind of ['api_key', 'user'] as const) {
          const res = await t.call(op.method, op.path, {
            token: tokens[role][kind],
            body: op.body?.(),
          });
          const want = expectation(role, permission);
          const ctx = `${role} ${kind} → ${op.method} ${op.path} (${permission}): ${res.statusCode} ${res.body}`;
          if (want === 'allowed') {
            expect(res.statusCode, ctx).toBeGreaterThanOrEqual(200);
            expect(res.statusCode, ctx).toBeLessThan(300);
          } else check(res, want, ctx);
        }
      }
    }
    expect(exercised).toBeGreaterThanOrEqual(3);
  });

  describe('API key management', () => {
    const keys = '/organizations/acme/api-keys';

    it('a key without can_manage_api_keys cannot manage keys even as admin', async () => {
      const admin = await insertApiKey(t, orgId, {
        slug: 'admin-no-manage',
        role: 'admin',
        canManageApiKeys: false,
      });
      await insertApiKey(t, orgId, { slug: 'target-1', role: 'viewer' });
      const attempts = [
        t.call('POST', keys, { token: admin.token, body: { name: 'nope', role: 'viewer' } }),
        t.call('POST', `${keys}/target-1:rotate`, { token: admin.token }),
        t.call('POST', `${keys}/target-1:revoke`, { token: admin.token }),
        t.call('PATCH', `${keys}/target-1`, { token: admin.token, body: { name: 'renamed' } }),
        t.call('DELETE', `${keys}/target-1`, { token: admin.token }),
      ];
      for (const res of await Promise.all(attempts)) {
        expect(res.statusCode, res.body).toBe(403);
        expect(res.json().error.code).toBe('FORBIDDEN');
      }
      // Reading stays allowed, and the target is unchanged.
      const got = await t.call('GET', `${keys}/target-1`, { token: admin.token });
      expect(got.statusCode).toBe(200);
      expect(got.json()).toMatchObject({ name: 'target-1', revoked_at: null });
    });

    it('no key can mint a stronger key', async () => {
      // can_manage_api_keys needs a role with api_keys.manage: a managing developer key cannot be made.
      const dev = await t.call('POST', keys, {
        token: ownerKey,
        body: { name: 'dev manager', role: 'developer', can_manage_api_keys: true },
      });
      expect(dev.statusCode, dev.body).toBe(400);
      expect(dev.json().error.validation_errors.map((e: any) => e.path)).toContain('can_manage_api_keys');
      // Even with the flag forced in the store, the developer role grants nothing over keys.
      const forced = await insertApiKey(t, orgId, {
        slug: 'dev-forced',
        role: 'developer',
        canManageApiKeys: true,
      });
      const byDev = await t.call('POST', keys, { token: forced.token, body: { name: 'x', role: 'viewer' } });
      expect(byDev.statusCode, byDev.body).toBe(404);

      const admin = tokens.admin.api_key;
      const owner = await t.call('POST', keys, { token: admin, body: { name: 'escalate', role: 'owner' } });
      expect(owner.statusCode, owner.body).toBe(403);
      expect(owner.json().error.code).toBe('FORBIDDEN');
      // A custom role holding organizations.delete is stronger than admin too.
      await t.rt.deps.db.insert(roles).values({
        organizationId: orgId,
        slug: 'deleter',
        name: 'Deleter',
        permissions: ['organizations.delete'],
      });
      for (const token of [admin, tokens.admin.user]) {
        const res = await t.call('POST', keys, { token, body: { name: 'sneaky', role: 'deleter' } });
        expect(res.statusCode, res.body).toBe(403);
      }
      // What admin holds, it may hand out.
      const ok = await t.call('POST', keys, { token: admin, body: { name: 'peer admin', role: 'admin' } });
      expect(ok.statusCode, ok.body).toBe(201);
    });

    it('an admin cannot rotate, revoke or delete an owner key', async () => {
      const target = await insertApiKey(t, orgId, {
        slug: 'owner-target',
        role: 'owner',
        canManageApiKeys: true,
      });
      for (const token of [tokens.admin.user, tokens.admin.api_key]) {
        for (const [method, path] of [
          ['POST', `${keys}/owner-target:rotate`],
          ['POST', `${keys}/owner-target:revoke`],
          ['DELETE', `${keys}/owner-target`],
        ] as const) {
          const res = await t.call(method, path, { token });
          expect(res.statusCode, `${method} ${path}: ${res.body}`).toBe(403);
          expect(res.json().error.code).toBe('FORBIDDEN');
        }
      }
      // The owner key still works with its original token.
      expect((await t.call('GET', keys, { token: target.token })).statusCode).toBe(200);
    });
  });
});
