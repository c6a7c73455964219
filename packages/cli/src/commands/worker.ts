import { type Command, InvalidArgumentError } from 'commander';
import { printLines } from '../io';
import { untilStopped } from '../shutdown';
import { startupDone } from '../startup';
import {
  configFrom,
  describeStore,
  describeWarmStart,
  loadServer,
  openStoreRuntime,
  warnIfMailGoesToLog,
} from '../store';

const SHUTDOWN_GRACE_MS = 20_000;

/**
 * A worker's platform connections at most (before SLUICE_DB_POOL_SIZE caps it). Its own
 * statements are short (the fetch that claims, log and progress flushes, the one-statement end):
 * a trivial run holds a connection for a few milliseconds of its own, so half its run slots plus
 * one for the queue serve them. Every connection is a PostgreSQL backend with its own catalog
 * caches and plans, warmed and kept for the life of the process (docs/operations.md): on a
 * server that many workers share, each one beyond what the statements need costs CPU per run,
 * not only a slot (max(4, C + 2) before 2026-11-29, docs/benchmarks.md). At least three: the
 * worker runs every queue (runs, schema imports, alert deliveries, retention) at C each, and a
 * job whose transaction reaches for a second connection must find one while another job holds
 * the first.
 */
export function workerPoolSize(concurrency: number): number {
  return Math.max(3, Math.ceil(concurrency / 2) + 1);
}

function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new InvalidArgumentError('an integer from 1 to 64');
  return n;
}

export function workerCommand(program: Command) {
  program
    .command('worker')
    .description(
      'Run jobs only (pipeline runs, schema imports, retention) until SIGINT/SIGTERM; any number of workers share one DATABASE_URL',
    )
    .option('--concurrency <n>', 'jobs this process runs at once per queue', count, 1)
    .action(async (opts: { concurrency: number }) => {
      const server = await loadServer();
      const configured = await configFrom();
      const config = {
        ...configured,
        dbPoolSize: Math.min(configured.dbPoolSize, workerPoolSize(opts.concurrency)),
      };
      const rt = await openStoreRuntime(config, { warmPool: true });
      let started: Awaited<ReturnType<typeof server.startWorker>>;
      try {
        started = await server.startWorker(rt.deps, {
          concurrency: opts.concurrency,
          warmStart: !!config.databaseUrl && config.workerWarmStart,
        });
      } catch (err) {
        await rt.close().catch(() => {});
        throw err;
      }
      printLines([
        'Sluice worker is running',
        `  store:       ${describeStore(config)}`,
        `  concurrency: ${opts.concurrency} per queue`,
        ...(started.warmStart ? [`  warm start:  ${describeWarmStart(started.warmStart)}`] : []),
      ]);

      warnIfMailGoesToLog(config, rt.deps.log);
      startupDone({ embeddedStore: !config.databaseUrl });

      // Runs in progress hand themselves back to the queue (same attempt) before the store closes.
      await untilStopped({
        log: rt.deps.log,
        message: 'worker shutting down',
        graceMs: SHUTDOWN_GRACE_MS,
        close: () => rt.close(),
      });
    });
}
