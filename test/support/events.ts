import { events } from '../../packages/server/src/db/schema/index';
import { randomSlug } from '../../packages/server/src/http/fields';
import type { Runtime } from '../../packages/server/src/runtime';

/** An event record of a test: its time, and whatever else the test cares about. */
export type EventFixture = Partial<typeof events.$inferInsert> & { occurredAt: Date };

/** Writes event records of an organization straight into the store, filling what they leave out. */
export async function insertEvents(rt: Runtime, organizationId: string, rows: EventFixture[]) {
  await rt.deps.db.insert(events).values(
    rows.map((r) => ({
      organizationId,
      slug: randomSlug('ev', 20),
      eventClass: 'activity',
      actorType: 'system',
      entityType: 'unknown',
      action: 'unknown',
      ...r,
    })),
  );
}
