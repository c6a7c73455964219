import fs from 'node:fs';
import path from 'node:path';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { acquireDataDirLock, type DataDirLock } from './lock';
import { openPgliteCluster } from './pglite';
import * as schema from './schema/index';
import { isoOfTimestamptz, parseTimestamptz } from './timestamptz';
import { type NamedText, type PoolWarmer, poolWarmer } from './warm';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** Repository functions take either; one that locks rows takes Tx. */
export type DbOrTx = Db | Tx;

export type SqlExecutor = {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
};

export type Store = SqlExecutor & {
  kind: 'pglite' | 'postgres';
  db: Db;
  /**
   * A named prepared statement in raw SQL, for the hottest read paths (every request's token
   * lookup, the first page of a list): parsed and planned once per connection, rows as the
   * driver parses them (timestamptz → Date, jsonb → object), without the ORM's row mapping.
   * Behind a transaction pooler it is sent unnamed (parsed on every call). With `isoTimes`,
   * timestamptz columns come as the API writes them (`toISOString`'s text, db/timestamptz.ts
   * isoOfTimestamptz) instead of Dates: a page that only writes its times out makes no Date.
   */
  prepared(name: string, text: string, values: unknown[], opts?: PreparedOptions): Promise<{ rows: any[] }>;
  ping(): Promise<void>;
  /**
   * Opens the pool to its floor (`poolMin`), each connection warmed (db/warm.ts): the first burst
   * after a start does not wait for new backends. With `statements` (a worker's hot statements,
   * db/named.ts namedText), every open connection is warmed with them too, before their first
   * use. Nothing to do on PGlite.
   */
  warmUp(statements?: NamedText[]): Promise<void>;
  /** Runs fn while holding a cluster-wide advisory lock (one process at a time). */
  withAdvisoryLock<T>(key: number, fn: () => Promise<T>): Promise<T>;
  /**
   * Delivers NOTIFY payloads of `channel` (sent on commit) to `onMessage`; a null payload means
   * notifications may have been missed (the listening connection was re-established).
   * Resolves with a function that stops listening.
   */
  listen(channel: string, onMessage: (payload: string | null) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
};

export type PreparedOptions = { isoTimes?: boolean };

export type StoreOptions = {
  databaseUrl?: string;
  dataDir: string;
  poolSize?: number;
  /**
   * Connections `warmUp` opens and idle timeouts leave open (at most poolSize; default 0: the
   * pool grows on demand and idle connections close after 30 s).
   */
  poolMin?: number;
  /**
   * `transaction`: databaseUrl is a pooler in transaction mode (PgBouncer 1.18), where a
   * statement prepared under a name on one server connection is missing on the next; every
   * statement is sent unnamed, and LISTEN needs `directUrl`.
   */
  pooler?: 'none' | 'transaction';
  /** The server itself, bypassing the pooler: where LISTEN holds its session. */
  directUrl?: string;
  /** Called for connection-level errors that would otherwise crash the process. */
  onBackgroundError?: (err: Error) => void;
};

export async function openStore(opts: StoreOptions): Promise<Store> {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl, opts) : openPglite(opts.dataDir);
}

/**
 * The pool's client: it tells the pool's warmer (db/warm.ts) each statement text it sends under a
 * name. Behind a transaction pooler it sends none under its name: consecutive statements of one
 * client reach different server connections, so a name prepared on one is unknown to (or already
 * taken on) the next. Unnamed statements are parsed in the same round trip as they run.
 */
function clientClass(warmer: () => PoolWarmer, unnamed: boolean): typeof pg.Client {
  return class extends pg.Client {
    override query(config: any, values?: any, callback?: any): any {
      if (config && typeof config === 'object' && typeof config.submit !== 'function' && config.name) {
        warmer().named(config.name, config.text);
        if (unnamed) {
          const { name: _name, ...rest } = config;
          return super.query(rest, values, callback);
        }
      }
      return super.query(config, values, callback);
    }
  };
}

/** How often a process waiting for an advisory lock asks again. */
const LOCK_RETRY_MS = 100;

/** pg's type parsers with timestamptz text read by `parse` (binary and other types as the driver's). */
const timestamptzTypes = (parse: (text: string) => unknown) => ({
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.TIMESTAMPTZ && format !== 'binary'
      ? parse
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
});
/** Raw queries read timestamptz with a faster parser that gives the same Date as the driver's. */
const dateTypes = timestamptzTypes(parseTimestamptz);
/** `prepared(…, { isoTimes: true })`: timestamptz as its ISO text, no Date. */
const isoTimeTypes = timestamptzTypes(isoOfTimestamptz);
/** PGlite's parsers for `isoTimes` (its text protocol; 1184 is timestamptz). */
const pgliteIsoTimes = { parsers: { 1184: isoOfTimestamptz } };

function openPostgres(url: string, opts: StoreOptions): Store {
  const transactionPooler = opts.pooler === 'transaction';
  const max = opts.poolSize ?? 10;
  const min = Math.min(max, opts.poolMin ?? 0);
  let warmer: PoolWarmer | null = null;
  const pool = new pg.Pool({
    connectionString: url,
    Client: clientClass(() => warmer!, transactionPooler),
    max,
    min,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    // Raw queries (store.prepared, executeSql); the ORM's queries set their own parsers per query.
    types: dateTypes,
  });
  // An idle client losing its server emits 'error' on the pool; without a listener the
  // process would die when the database restarts.
  pool.on('error', (err) => opts.onBackgroundError?.(err));
  // A client checked out of the pool (a transaction, an advisory lock held) emits 'error' on
  // itself when its server goes away, and pg-pool listens only while it is idle: without this the
  // process died when the server crashed or ended that session in the middle of a transaction.
  // The holder learns it from its next statement, which fails, and the pool drops the client
  // when it comes back (docs/operations.md "Embedded store or PostgreSQL server").
  pool.on('connect', (client) => client.on('error', () => {}));
  warmer = poolWarmer(pool);
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  return {
    kind: 'postgres',
    db,
    executeSql: (text, values) => pool.query(text, values as any[]),
    prepared: (name, text, values, o) =>
      pool.query(o?.isoTimes ? { name, text, values, types: isoTimeTypes } : { name, text, values }),
    ping: async () => {
      await pool.query('select 1');
    },
    warmUp: (statements) => warmer!.open(min, statements),
    // A transaction-level lock in a transaction left open while fn works on other connections: a
    // pooler in transaction mode keeps the session under an open transaction, where a session
    // lock's unlock could reach another server connection (and leave the lock held for good).
    // A process that dies ends its transaction, and the lock with it. Waiting is by retrying
    // outside a transaction: a waiter blocked inside one would hold one of the pooler's server
    // connections, and processes starting together could take them all from the holder's fn.
    withAdvisoryLock: async (key, fn) => {
      const client = await pool.connect();
      let broken = false;
      try {
        for (;;) {
          await client.query('begin');
          const got = await client.query('select pg_try_advisory_xact_lock($1) as ok', [key]);
          if (got.rows[0].ok) break;
          await client.query('rollback');
          await new Promise((r) => setTimeout(r, LOCK_RETRY_MS));
        }
        return await fn();
      } finally {
        await client.query('commit').catch(() => {
          broken = true;
        });
        client.release(broken);
      }
    },
    listen: (channel, onMessage) => {
      if (!transactionPooler) return listenPostgres(url, channel, onMessage, opts.onBackgroundError);
      // Through the pooler LISTEN succeeds, but on a server connection other clients get next;
      // the notifications never reach this one.
      if (!opts.directUrl)
        return Promise.reject(new Error('LISTEN behind a transaction pooler needs DATABASE_DIRECT_URL'));
      return listenPostgres(opts.directUrl, channel, onMessage, opts.onBackgroundError);
    },
    close: () => pool.end(),
  };
}

/**
 * LISTEN on a connection of its own (a pooled one would be handed to other queries). A lost
 * connection is re-opened with a growing delay; whoever listens keeps a polling fallback, so a
 * gap only slows wake-ups down.
 */
async function listenPostgres(
  url: string,
  channel: string,
  onMessage: (payload: string | null) => void,
  onError?: (err: Error) => void,
): Promise<() => Promise<void>> {
  let client: pg.Client | null = null;
  let stopped = false;
  let retryMs = 500;
  let timer: NodeJS.Timeout | null = null;
  const ident = `"${channel.replace(/"/g, '""')}"`;
  const connect = async (reconnect: boolean) => {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
    c.on('notification', (msg) => onMessage(msg.payload ?? ''));
    c.on('error', (err) => {
      onError?.(err);
      retry(c);
    });
    c.on('end', () => retry(c));
    client = c;
    try {
      await c.connect();
      await c.query(`listen ${ident}`);
      retryMs = 500;
      if (reconnect) onMessage(null);
    } catch (err) {
      if (!reconnect) {
        stopped = true;
        if (timer) clearTimeout(timer);
        c.end().catch(() => {});
        throw err;
      }
      retry(c);
    }
  };
  const retry = (c: pg.Client) => {
    if (stopped || client !== c || timer) return;
    client = null;
    c.end().catch(() => {});
    timer = setTimeout(() => {
      timer = null;
      if (!stopped) void connect(true);
    }, retryMs);
    timer.unref();
    retryMs = Math.min(retryMs * 2, 30_000);
  };
  await connect(false);
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    const c = client;
    client = null;
    await c?.end().catch(() => {});
  };
}

async function openPglite(dataDir: string): Promise<Store> {
  const dir = path.resolve(dataDir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lock: DataDirLock = acquireDataDirLock(dir);
  try {
    const client = await openPgliteCluster(dir);
    const { drizzle: drizzlePglite } = await import('drizzle-orm/pglite');
    const db = drizzlePglite(client, { schema }) as unknown as Db;
    return {
      kind: 'pglite',
      db,
      // The extended protocol refuses several statements in one string; pg-boss sends such
      // scripts without parameters, which the simple protocol (exec) accepts.
      executeSql: async (text, values) => {
        if (values && values.length > 0)
          return client.query(text, values as any[]) as Promise<{ rows: any[] }>;
        const results = await client.exec(text);
        return { rows: results.at(-1)?.rows ?? [] };
      },
      // One connection, in process: there is no statement cache to name.
      prepared: (_name, text, values, o) =>
        client.query(text, values as any[], o?.isoTimes ? pgliteIsoTimes : undefined) as Promise<{
          rows: any[];
        }>,
      ping: async () => {
        await client.query('select 1');
      },
      warmUp: async () => {},
      // One process owns the data directory (see lock.ts), so there is nobody to exclude.
      withAdvisoryLock: (_key, fn) => fn(),
      // Same instance, same process: PGlite hands notifications to its listeners on commit.
      listen: async (channel, onMessage) => {
        const unlisten = await client.listen(channel, (payload) => onMessage(payload));
        return () => unlisten().catch(() => {});
      },
      close: async () => {
        await client.close();
        lock.release();
      },
    };
  } catch (err) {
    lock.release();
    throw err;
  }
}
