import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { members, users } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type MemberRow = typeof members.$inferSelect & { userSlug: string; email: string; name: string };

const columns = { member: members, userSlug: users.slug, email: users.email, name: users.name };

function flatten(r: { member: typeof members.$inferSelect; userSlug: string; email: string; name: string }) {
  return { ...r.member, userSlug: r.userSlug, email: r.email, name: r.name };
}

export async function listMembers(db: DbOrTx, organizationId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: {
      member_created_at: { column: members.createdAt, kind: 'timestamp' },
      member_updated_at: { column: members.updatedAt, kind: 'timestamp' },
      member_email: { column: users.email, kind: 'text' },
    },
    tiebreak: users.slug,
    fetch: async ({ where, orderBy, limit }) =>
      (
        await db
          .select(columns)
          .from(members)
          .innerJoin(users, eq(users.id, members.userId))
          .where(and(eq(members.organizationId, organizationId), where))
          .orderBy(...orderBy)
          .limit(limit)
      ).map(flatten),
    keyOf: (r) => ({
      value:
        query.sort_by === 'member_email'
          ? r.email
          : query.sort_by === 'member_updated_at'
            ? r.updatedAt
            : r.createdAt,
      id: r.userSlug,
    }),
  });
}

export async function findMember(db: DbOrTx, organizationId: string, userSlug: string) {
  const [row] = await db
    .select(columns)
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(and(eq(members.organizationId, organizationId), eq(users.slug, userSlug)))
    .limit(1);
  return row ? flatten(row) : null;
}

export async function findMemberByEmail(db: DbOrTx, organizationId: string, email: string) {
  const [row] = await db
    .select(columns)
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(and(eq(members.organizationId, organizationId), sql`lower(${users.email}) = ${email}`))
    .limit(1);
  return row ? flatten(row) : null;
}

export async function isMember(db: DbOrTx, organizationId: string, userId: string): Promise<boolean> {
  const [row] = await db
    .select({ one: sql`1` })
    .from(members)
    .where(and(eq(members.organizationId, organizationId), eq(members.userId, userId)))
    .limit(1);
  return Boolean(row);
}

export async function countOwners(db: DbOrTx, organizationId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(members)
    .where(and(eq(members.organizationId, organizationId), eq(members.role, 'owner')));
  return Number(row?.n ?? 0);
}

export async function insertMember(db: DbOrTx, values: typeof members.$inferInsert) {
  const [row] = await db.insert(members).values(values).returning();
  return row;
}

export async function updateMemberRole(db: DbOrTx, id: string, role: string) {
  await db.update(members).set({ role, updatedAt: new Date() }).where(eq(members.id, id));
}

export async function deleteMember(db: DbOrTx, id: string) {
  await db.delete(members).where(eq(members.id, id));
}
