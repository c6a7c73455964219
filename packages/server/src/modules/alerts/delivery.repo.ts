import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { alertDeliveryAttempts, alertDestinationWindows, notifications } from '../../db/schema/index';
import { randomSlug } from '../../http/fields';

// The send decision, claimed so that any number of workers mail once: a conditional upsert of the
// (notification, destination) gate, then the destination's hourly window under its row lock, then
// the attempt row and its job in the same transaction.

export type GateReason = 'open' | 'reopen' | 'escalate' | 'repeat';

const rowsOf = (res: unknown): any[] => ((res as { rows?: unknown[] }).rows ?? (res as unknown[])) as any[];

export async function claimGate(
  tx: DbOrTx,
  o: {
    notificationId: string;
    destinationId: string;
    seq: number;
    reason: GateReason;
    now: Date;
    repeatMs: number;
    reopenQuietMs: number;
  },
): Promise<boolean> {
  const now = o.now.toISOString();
  const repeatBefore = new Date(o.now.getTime() - o.repeatMs).toISOString();
  const quietBefore = new Date(o.now.getTime() - o.reopenQuietMs).toISOString();
  const res = await tx.execute(sql`
    insert into alert_send_gates as g (notification_id, destination_id, last_seq, last_sent_at)
    values (${o.notificationId}, ${o.destinationId}, ${o.seq}, ${now}::timestamptz)
    on conflict (notification_id, destination_id) do update
       set last_seq = greatest(g.last_seq, excluded.last_seq), last_sent_at = excluded.last_sent_at
     where (${o.reason} in ('open', 'escalate') and g.last_seq < excluded.last_seq)
        or (${o.reason} = 'reopen' and g.last_seq < excluded.last_seq
            and g.last_sent_at <= ${quietBefore}::timestamptz)
        or (${o.reason} = 'repeat' and g.last_sent_at <= ${repeatBefore}::timestamptz)
    returning 1 as claimed`);
  return rowsOf(res).length > 0;
}

/** Counts one message against the destination's hourly cap; how many were held back before it. */
export async function takeWindowSlot(
  tx: DbOrTx,
  destinationId: string,
  now: Date,
  cap: number,
): Promise<{ allowed: boolean; heldBack: number }> {
  const hour = new Date(Math.floor(now.getTime() / 3600_000) * 3600_000);
  await tx.insert(alertDestinationWindows).values({ destinationId, windowStart: hour }).onConflictDoNothing();
  const [w] = await tx
    .select()
    .from(alertDestinationWindows)
    .where(eq(alertDestinationWindows.destinationId, destinationId))
    .for('update');
  // A new hour starts a new count; what was held back is still told in the next message.
  const sent = w.windowStart < hour ? 0 : w.sent;
  if (sent >= cap) {
    await tx
      .update(alertDestinationWindows)
      .set({ heldBack: w.heldBack + 1 })
      .where(eq(alertDestinationWindows.destinationId, destinationId));
    return { allowed: false, heldBack: w.heldBack + 1 };
  }
  await tx
    .update(alertDestinationWindows)
    .set({ windowStart: hour, sent: sent + 1, heldBack: 0 })
    .where(eq(alertDestinationWindows.destinationId, destinationId));
  return { allowed: true, heldBack: w.heldBack };
}

export type NewAttempt = Omit<typeof alertDeliveryAttempts.$inferInsert, 'slug' | 'status'>;

export async function insertAttempt(tx: DbOrTx, values: NewAttempt) {
  const [row] = await tx
    .insert(alertDeliveryAttempts)
    .values({ ...values, slug: randomSlug('att'), status: 'queued' })
    .returning();
  return row;
}

export async function findAttempt(db: DbOrTx, id: string, lock = false) {
  const q = db.select().from(alertDeliveryAttempts).where(eq(alertDeliveryAttempts.id, id));
  const [row] = lock ? await q.for('update') : await q.limit(1);
  return row ?? null;
}

export async function updateAttempt(
  tx: DbOrTx,
  id: string,
  values: Partial<typeof alertDeliveryAttempts.$inferInsert>,
) {
  await tx.update(alertDeliveryAttempts).set(values).where(eq(alertDeliveryAttempts.id, id));
}

export async function findNotificationById(db: DbOrTx, id: string) {
  const [row] = await db.select().from(notifications).where(eq(notifications.id, id)).limit(1);
  return row ?? null;
}
