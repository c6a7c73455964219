import { createHash } from 'node:crypto';
import type { SQL } from 'drizzle-orm';
import { PgDialect, type PgSession } from 'drizzle-orm/pg-core';
import type { DbOrTx } from './client';
import type { NamedText } from './warm';

// The run path's big statements (an execute, the queue's fetch that claims the run, the run's
// end) are CTEs over a dozen tables whose planning cost the store about as much CPU as running
// them (docs/benchmarks.md "Run path statements, prepared"). Named, each is parsed once per
// connection, and after a few executions PostgreSQL keeps its generic plan: no planning at all.
// Behind a transaction pooler the store's client drops the name (client.ts
// clientClass); PGlite ignores it.

const dialect = new PgDialect();
const names = new Map<string, string>();
/** Distinct texts named by this process: a text built with a varying literal would grow it. */
const MAX_NAMES = 500;

/**
 * A name per statement text: the same text gets the same name on every connection, so one name
 * never stands for two texts. `prefix` tells a module's statements apart in pg_prepared_statements.
 */
export function statementName(text: string, prefix = 'sluice'): string {
  let name = names.get(text);
  if (!name) {
    if (names.size >= MAX_NAMES) names.clear();
    name = `${prefix}_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

/** The name and text `executeNamed` sends `query` under: to warm connections with (db/warm.ts). */
export function namedText(query: SQL): NamedText {
  const { sql: text } = dialect.sqlToQuery(query);
  return { name: statementName(text), text };
}

/**
 * `db.execute(query)` as a named prepared statement on the connection `db` runs on (the pool's or
 * the transaction's), with the same rows (drizzle's raw execute: timestamps as text). Drizzle
 * names only its query builders' statements (`.prepare(name)`); this asks its session the same
 * way for a raw one.
 */
export async function executeNamed(db: DbOrTx, query: SQL): Promise<any[]> {
  const built = dialect.sqlToQuery(query);
  return executeNamedText(db, built.sql, built.params);
}

/** `executeNamed` of a statement already written out, its values for `$1`, `$2`, …: nothing built. */
export async function executeNamedText(db: DbOrTx, text: string, values: unknown[]): Promise<any[]> {
  const session = (db as unknown as { session: PgSession }).session;
  const res: any = await session
    .prepareQuery({ sql: text, params: values }, undefined, statementName(text), false)
    .execute();
  return Array.isArray(res) ? res : (res.rows ?? []);
}
