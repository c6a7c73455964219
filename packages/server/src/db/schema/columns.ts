import { sql } from 'drizzle-orm';
import { timestamp, uuid } from 'drizzle-orm/pg-core';

// Millisecond precision so a timestamp read into a JS Date and written back into a cursor
// compares equal to the stored value.
export const ts = (name: string) => timestamp(name, { withTimezone: true, precision: 3, mode: 'date' });

export const id = () => uuid('id').primaryKey().default(sql`gen_random_uuid()`);

export const timestamps = () => ({
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});
