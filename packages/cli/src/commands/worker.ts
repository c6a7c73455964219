import { type Command, InvalidArgumentError } from 'commander';
import { printLines } from '../io';
import { untilStopped } from '../shutdown';
import { startupDone } from '../startup';
import { configFrom, describeStore, loadServer, openStoreRuntime, warnIfMailGoesToLog } from '../store';

const SHUTDOWN_GRACE_MS = 20_000;

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
      // A worker's own statements are short (claim, heartbeats, progress, the final
      // transaction): a few connections beyond its run slots serve them, and the rest of
      // SLUICE_DB_POOL_SIZE stays free on a server that many workers share.
      const config = {
        ...configured,
        dbPoolSize: Math.min(configured.dbPoolSize, Math.max(4, opts.concurrency + 2)),
      };
      const rt = await openStoreRuntime(config, { warmPool: true });
      try {
        await server.startWorker(rt.deps, { concurrency: opts.concurrency });
      } catch (err) {
        await rt.close().catch(() => {});
        throw err;
      }
      printLines([
        'Sluice worker is running',
        `  store:       ${describeStore(config)}`,
        `  concurrency: ${opts.concurrency} per queue`,
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
