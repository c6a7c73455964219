import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { roles } from '../../db/schema/index';
import { allPermissions, builtInRoles, isBuiltInRole, type Permission } from './permissions';

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
  const known = new Set<string>(allPermissions);
  return new Set(row.permissions.filter((p): p is Permission => known.has(p)));
}
