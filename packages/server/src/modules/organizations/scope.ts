import { and, eq, sql } from 'drizzle-orm';
import { actorOf, type Org, type Principal, type Scope } from '../../context';
import type { Db } from '../../db/client';
import { members, organizations } from '../../db/schema/index';
import { isBuiltInRole } from '../../permissions';
import { knownPermissions, permissionsOfRole } from '../roles/index';

const orgColumns = {
  id: organizations.id,
  slug: organizations.slug,
  name: organizations.name,
  eventLogRetentionDays: organizations.eventLogRetentionDays,
};

// Prepared once per database handle: every organization route runs one of these.
function prepare(db: Db) {
  return {
    membership: db
      .select({ org: orgColumns, role: members.role })
      .from(organizations)
      .innerJoin(members, eq(members.organizationId, organizations.id))
      .where(
        and(eq(organizations.slug, sql.placeholder('slug')), eq(members.userId, sql.placeholder('userId'))),
      )
      .limit(1)
      .prepare('sluice_scope_member'),
    org: db
      .select(orgColumns)
      .from(organizations)
      .where(eq(organizations.slug, sql.placeholder('slug')))
      .limit(1)
      .prepare('sluice_scope_org'),
  };
}

const prepared = new WeakMap<Db, ReturnType<typeof prepare>>();
function statements(db: Db) {
  let s = prepared.get(db);
  if (!s) {
    s = prepare(db);
    prepared.set(db, s);
  }
  return s;
}

/**
 * The caller's standing in an organization, or null when the organization does not exist or
 * the caller has no part in it (both answered 404, indistinguishably).
 */
export async function resolveScope(db: Db, principal: Principal, orgSlug: string): Promise<Scope | null> {
  let org: Org;
  let role: string;
  if (principal.type === 'api_key') {
    // An API key lives in one organization, read along with the key itself.
    const own = principal.organization ?? (await statements(db).org.execute({ slug: orgSlug }))[0];
    if (!own || own.slug !== orgSlug || own.id !== principal.organizationId) return null;
    org = own;
    role = principal.role;
    // A custom role's permissions came along with the key: no second read.
    if (!isBuiltInRole(role) && principal.storedRolePermissions !== undefined) {
      const stored = principal.storedRolePermissions;
      return { org, principal, actor: actorOf(principal), role, permissions: knownPermissions(stored ?? []) };
    }
  } else {
    const [m] = await statements(db).membership.execute({ slug: orgSlug, userId: principal.userId });
    if (!m) return null;
    org = m.org;
    role = m.role;
  }
  const permissions = (await permissionsOfRole(db, org.id, role)) ?? new Set();
  return { org, principal, actor: actorOf(principal), role, permissions };
}
