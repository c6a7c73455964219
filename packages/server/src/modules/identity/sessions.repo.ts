import { and, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { sessions, users } from '../../db/schema/index';

export type SessionRow = typeof sessions.$inferSelect;

// Times come from the database clock (now()), so every app host agrees on expiry and on when a
// session was last seen, whatever its own clock says.
const TOUCH_EVERY = sql`interval '1 minute'`;

/** Stores a new session by the hash of its secret; it ends ttlSeconds from now. */
export async function insertSession(
  db: DbOrTx,
  v: { userId: string; tokenHash: string; ttlSeconds: number },
): Promise<SessionRow> {
  const [row] = await db
    .insert(sessions)
    .values({
      userId: v.userId,
      tokenHash: v.tokenHash,
      expiresAt: sql`now() + make_interval(secs => ${v.ttlSeconds})`,
    })
    .returning();
  return row;
}

/**
 * The unexpired session with this secret hash and its user; `stale` says whether last_seen_at
 * is old enough to be worth a write.
 */
export async function findActiveSession(db: DbOrTx, tokenHash: string) {
  const [row] = await db
    .select({
      session: sessions,
      user: users,
      stale: sql<boolean>`(${sessions.lastSeenAt} is null or ${sessions.lastSeenAt} < now() - ${TOUCH_EVERY})`,
    })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, tokenHash), gt(sessions.expiresAt, sql`now()`)))
    .limit(1);
  return row ?? null;
}

/** Records use of a session, at most once a minute (the condition holds under concurrency too). */
export async function touchSession(db: DbOrTx, id: string): Promise<void> {
  await db
    .update(sessions)
    .set({ lastSeenAt: sql`now()` })
    .where(
      and(
        eq(sessions.id, id),
        or(isNull(sessions.lastSeenAt), lt(sessions.lastSeenAt, sql`now() - ${TOUCH_EVERY}`)),
      ),
    );
}

/**
 * Whether a session still exists and whether it has expired, by the database clock; null once it
 * is deleted (signed out, password changed, account deleted, replaced by a new sign-in).
 */
export async function sessionStanding(db: DbOrTx, id: string): Promise<{ expired: boolean } | null> {
  const [row] = await db
    .select({ expired: sql<boolean>`(${sessions.expiresAt} <= now())` })
    .from(sessions)
    .where(eq(sessions.id, id))
    .limit(1);
  return row ?? null;
}

export async function deleteSession(db: DbOrTx, id: string): Promise<boolean> {
  const rows = await db.delete(sessions).where(eq(sessions.id, id)).returning({ id: sessions.id });
  return rows.length > 0;
}

/** Ends every session of a user (password change, account deletion). */
export async function deleteSessionsOfUser(db: DbOrTx, userId: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.userId, userId));
}
