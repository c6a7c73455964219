import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { roles } from '../../db/schema/index';
import { allPermissions, builtInRoles, isBuiltInRole, type Permission } from '../../permissions';

/** The permissions a role slug grants in an organization (built-in or custom); null if unknown. */
export async function permissionsOfRole(
  db: DbOrTx,
  organizationId: string,
  role: string,
): Promise<Set<Permission> | null> {
  if (isBuiltInRole(role)) return new Set(builtInRoles[role].permissions);
  const [row] = await db
    .select({ permissions: roles.permissions })
    .from(roles)
    .where(and(eq(roles.organizationId, organizationId), eq(roles.slug, role)))
    .limit(1);
  if (!row) return null;
  return knownPermissions(row.permissions);
}

const known = new Set<string>(allPermissions);

/** A custom role's stored permission list, without names this version does not know. */
export function knownPermissions(stored: readonly string[]): Set<Permission> {
  return new Set(stored.filter((p): p is Permission => known.has(p)));
}
