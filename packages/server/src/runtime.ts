import type { Writable } from 'node:stream';
import type { App } from './app';
import type { Deps } from './context';
import { createKeyring } from './crypto/keyring';
import { loadMasterKey } from './crypto/master-key';
import { openStore } from './db/client';
import { migrate } from './db/migrate';
import { openReads, type Reads } from './db/replica';
import type { Config } from './env';
import { createLogger } from './http/logging';
import { jobDefinitions } from './jobs/catalog';
import { openQueue } from './jobs/queue';
import { startTriggerTicker } from './jobs/trigger-ticker';
import { startWorker } from './jobs/worker';
import { createMailer } from './mail/mailer';
import { ensureSigningKey } from './modules/proof/index';

export type Runtime = { deps: Deps; close(): Promise<void> };

/**
 * Opens the store (migrating it), the queue and the mailer: everything a process needs. `warmPool`
 * (API hosts and workers): the store's pool is opened to its floor at start and kept there, warm
 * (db/warm.ts), so the first burst after a start or a quiet spell does not wait for new backends.
 * `reads` (API hosts): lists are read from DATABASE_READ_URL while it is fresh (db/replica.ts).
 */
export async function openRuntime(
  config: Config,
  opts: { logStream?: Writable; supervise?: boolean; warmPool?: boolean; reads?: boolean } = {},
): Promise<Runtime> {
  const log = createLogger({ level: config.logLevel, stream: opts.logStream });
  const poolMin = opts.warmPool ? (config.dbPoolMin ?? config.dbPoolSize) : 0;
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.dbPoolSize,
    poolMin,
    pooler: config.dbPooler.mode,
    directUrl: config.dbPooler.directUrl,
    onBackgroundError: (err) => log.warn({ errCode: (err as any).code }, 'database connection lost'),
  });
  let reads: Reads | undefined;
  try {
    await migrate(store);
    const queue = await openQueue(store, {
      pollSeconds: config.queuePollSeconds,
      supervise: opts.supervise ?? true,
      jobs: jobDefinitions,
    });
    const keyring = createKeyring(
      loadMasterKey({ masterKey: config.masterKey, dataDir: config.dataDir }).key,
    );
    await keyring.ensureActiveKey(store.db);
    const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.smtpFrom, log });
    if (opts.reads && config.reads) {
      reads = await openReads(store, {
        url: config.reads.url,
        maxLagMs: config.reads.maxLagMs,
        poolSize: config.dbPoolSize,
        poolMin,
        pooler: config.dbPooler.mode,
        onChange: (usable, reason) =>
          usable
            ? log.info({ reason }, 'lists are read from the read replica')
            : log.warn({ reason }, 'lists are read from the store: the read replica is not usable'),
        onBackgroundError: (err) => log.warn({ errCode: (err as any).code }, 'read replica connection lost'),
      });
    }
    const deps: Deps = { config, store, db: store.db, reads, queue, mailer, keyring, log };
    // Receipts are verified against keys pinned in advance (docs/proof.md): the key exists
    // from the first start, not from the first receipt.
    await ensureSigningKey(deps);
    if (opts.warmPool) await store.warmUp();
    return {
      deps,
      async close() {
        await queue.stop().catch(() => {});
        mailer.close();
        await reads?.close();
        await store.close();
      },
    };
  } catch (err) {
    await reads?.close().catch(() => {});
    await store.close().catch(() => {});
    throw err;
  }
}

export type Server = { api: App; apiUrl: string; close(): Promise<void> };

/** `sluice serve`: API host plus an in-process worker. */
export async function startApi(rt: Runtime, opts: { worker?: boolean } = {}): Promise<Server> {
  // Loaded here, not at the top: processes that only run jobs never load the HTTP routes.
  const { buildApp } = await import('./app');
  const api = await buildApp(rt.deps);
  const { host, port } = rt.deps.config.api;
  const apiUrl = await api.listen({ host, port });
  if (opts.worker !== false) await startWorker(rt.deps);
  // API-only hosts tick too (docs/triggers.md#how-it-fires-exactly-once); the ticker starts once
  // per process.
  startTriggerTicker(rt.deps);
  return {
    api,
    apiUrl,
    async close() {
      await api.close();
    },
  };
}
