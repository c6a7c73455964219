import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { emailVerificationTokens, members, organizations, users } from '../../db/schema/index';

export type UserRow = typeof users.$inferSelect;

export async function findUserById(db: DbOrTx, id: string): Promise<UserRow | null> {
  const [row] = await db.select().from(users).where(eq(users.id, id)).limit(1);
  return row ?? null;
}

export async function findUserByEmail(db: DbOrTx, email: string): Promise<UserRow | null> {
  const [row] = await db.select().from(users).where(eq(users.email, email)).limit(1);
  return row ?? null;
}

export async function userSlugTaken(db: DbOrTx, slug: string): Promise<boolean> {
  const [row] = await db.select({ one: sql`1` }).from(users).where(eq(users.slug, slug)).limit(1);
  return Boolean(row);
}

export async function emailTaken(db: DbOrTx, email: string): Promise<boolean> {
  const [row] = await db.select({ one: sql`1` }).from(users).where(eq(users.email, email)).limit(1);
  return Boolean(row);
}

export async function insertUser(db: DbOrTx, values: typeof users.$inferInsert): Promise<UserRow> {
  const [row] = await db.insert(users).values(values).returning();
  return row;
}

export async function updateUser(
  db: DbOrTx,
  id: string,
  values: Partial<Pick<typeof users.$inferInsert, 'name' | 'passwordHash' | 'emailVerifiedAt'>>,
): Promise<UserRow> {
  const [row] = await db
    .update(users)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(users.id, id))
    .returning();
  return row;
}

/**
 * Marks an unused, unexpired verification token used and returns its user; null otherwise.
 * One conditional UPDATE, so two concurrent uses of a token cannot both succeed.
 */
export async function consumeVerificationToken(db: DbOrTx, tokenHash: string, now: Date) {
  const [row] = await db
    .update(emailVerificationTokens)
    .set({ usedAt: now })
    .where(
      and(
        eq(emailVerificationTokens.tokenHash, tokenHash),
        isNull(emailVerificationTokens.usedAt),
        gt(emailVerificationTokens.expiresAt, now),
      ),
    )
    .returning({ userId: emailVerificationTokens.userId });
  return row?.userId ?? null;
}

/** The organizations a user belongs to: where account-level events are recorded. */
export async function organizationsOfUser(db: DbOrTx, userId: string) {
  return db
    .select({ id: organizations.id, slug: organizations.slug })
    .from(members)
    .innerJoin(organizations, eq(organizations.id, members.organizationId))
    .where(eq(members.userId, userId))
    .orderBy(organizations.slug);
}
