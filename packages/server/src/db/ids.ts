import { randomUUID } from 'node:crypto';

// Ids of the rows a run writes, ordered by the time they are made (docs/operations.md#row-ids).
// A random UUID puts each new row on a random leaf of its index: once an index outgrows memory,
// every insert reads a leaf from disk, and the first change to each leaf after a checkpoint
// writes the whole 8 kB page to the WAL. Ids that grow with time keep new rows on the few leaves
// at the index's right edge, however many rows came before.

/** 48 bits of Unix milliseconds as 12 hex digits, in JavaScript and in SQL (of `at`). */
const msHex = (now: number) => now.toString(16).padStart(12, '0');
const msHexSql = (at: string) => `lpad(to_hex((extract(epoch from ${at}) * 1000)::bigint), 12, '0')`;

/** A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, the version, 74 random bits. */
export function timeOrderedId(now = Date.now()): string {
  const time = msHex(now);
  // randomUUID's version digit is at 14: the rest (random, with the RFC's variant bits) is kept.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
}

/**
 * A step's id: its position in the plan (32 bits), then the time (48 bits) and 48 random bits,
 * so ordering a run's steps by id lists them in plan order, and each position's new steps join
 * its index at the right edge.
 */
export function planOrderedId(index: number, now = Date.now()): string {
  const head = index.toString(16).padStart(8, '0');
  const time = msHex(now);
  return `${head}-${time.slice(0, 4)}-${time.slice(4, 8)}-${time.slice(8, 12)}-${randomUUID().slice(24)}`;
}

/** timeOrderedId in SQL: the milliseconds of the call, version 7, then a random UUID's last 19 digits. */
export const TIME_ORDERED_ID_SQL = `(${msHexSql('clock_timestamp()')} || '7' || right(replace(gen_random_uuid()::text, '-', ''), 19))::uuid`;

/** planOrderedId in SQL, for the position `index` (SQL): the statement's milliseconds, so one statement's steps share them. */
export const planOrderedIdSql = (index: string) =>
  `(lpad(to_hex(${index}), 8, '0') || ${msHexSql('statement_timestamp()')} || right(gen_random_uuid()::text, 12))::uuid`;
