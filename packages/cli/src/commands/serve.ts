import { fork } from 'node:child_process';
import type { WarmStart } from '@sluice/server';
import { type Command, InvalidArgumentError } from 'commander';
import { CliError, ExitCode } from '../exit';
import { printLines } from '../io';
import { untilStopped } from '../shutdown';
import { startupDone } from '../startup';
import {
  configFrom,
  describeReads,
  describeStore,
  describeWarmStart,
  loadServer,
  openStoreRuntime,
  warnIfMailGoesToLog,
} from '../store';

type ServeOptions = { apiAddr?: string; appAddr?: string; workers: number; worker: boolean };

const SHUTDOWN_GRACE_MS = 15_000;

function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 64) throw new InvalidArgumentError('an integer from 0 to 64');
  return n;
}

export function serveCommand(program: Command) {
  program
    .command('serve')
    .description('Run the API host, the app host and an in-process worker until SIGINT/SIGTERM')
    .option('--api-addr <host:port>', 'API host address (env SLUICE_API_ADDR, default 127.0.0.1:8080)')
    .option('--app-addr <host:port>', 'app host address (env SLUICE_APP_ADDR, default 127.0.0.1:8081)')
    .option('--workers <n>', 'jobs this process runs at once per queue (0 = no worker)', count, 1)
    .option('--no-worker', 'run no jobs in this process (run workers elsewhere on the same DATABASE_URL)')
    .action(async (opts: ServeOptions) => {
      const overrides = { SLUICE_API_ADDR: opts.apiAddr, SLUICE_APP_ADDR: opts.appAddr };
      // A first start on the embedded store copies its new cluster while the server loads; what
      // fails there fails again, and is reported, when the store opens below.
      const ahead = import('@sluice/server/first-start.js')
        .then((m) => m.prepareEmbeddedStore(overrides))
        .catch(() => {});
      const server = await loadServer();
      const config = await configFrom(overrides);
      await ahead;
      const rt = await openStoreRuntime(config, { warmPool: true, reads: true });
      const workers = opts.worker ? opts.workers : 0;
      const closers: (() => Promise<unknown>)[] = [() => rt.close()];
      const closeAll = async () => {
        for (const close of closers.splice(0).reverse()) await close().catch(() => {});
      };

      let apiUrl: string;
      let appUrl: string;
      let warm: WarmStart | null = null;
      try {
        const api = await listening(config.api, () => server.startApi(rt, { worker: false }));
        closers.push(() => api.close());
        apiUrl = api.apiUrl;
        if (workers > 0)
          ({ warmStart: warm } = await server.startWorker(rt.deps, {
            concurrency: workers,
            warmStart: !!config.databaseUrl && config.workerWarmStart,
            // On the embedded store this process holds the store: its runs' transforms run in a
            // child process (docs/operations.md, "Transforms on the embedded store").
            transformHost: config.databaseUrl ? undefined : startTransformHost,
          }));
        // The app host's /api is answered by this API host's routes: one route table for both.
        const appHost = await server.buildAppHost(rt.deps, { api: api.api });
        closers.push(() => appHost.close());
        appUrl = await listening(config.app, () =>
          appHost.listen({ host: config.app.host, port: config.app.port }),
        );
      } catch (err) {
        await closeAll();
        throw err;
      }

      // While no organization exists, a one-time code lets a newcomer get a token through this
      // running server (`sluice setup`), since the embedded store is held by this process.
      const setupCode = await server.issueSetupCode(rt.deps);
      printLines([
        'Sluice is running',
        `  API host: ${apiUrl}`,
        `  app host: ${appUrl}`,
        `  store:    ${describeStore(config)}`,
        ...(rt.deps.reads ? [`  lists:    ${describeReads(config, rt.deps.reads.state())}`] : []),
        `  workers:  ${workers > 0 ? `${workers} in this process` : 'none in this process'}`,
        ...(warm ? [`  warm start: ${describeWarmStart(warm)}`] : []),
        ...(setupCode
          ? [
              '',
              'No organization yet. Create the first one and get a token (in another terminal):',
              `  npx sluice setup --base-url ${apiUrl} --org acme --email you@example.com`,
              `  setup code: ${setupCode}   (also in ${server.setupCodePath(config)}, mode 0600; single use)`,
            ]
          : []),
      ]);

      warnIfMailGoesToLog(config, rt.deps.log);
      startupDone({ embeddedStore: !config.databaseUrl });

      // Stop accepting requests, let in-flight ones and running jobs finish, then close the store.
      await untilStopped({
        log: rt.deps.log,
        message: 'shutting down',
        graceMs: SHUTDOWN_GRACE_MS,
        close: closeAll,
      });
    });
}

/** This CLI again, as `sluice transform-host`, with an IPC channel (commands/transform-host.ts). */
const startTransformHost = () =>
  fork(process.argv[1], ['transform-host'], {
    serialization: 'advanced',
    execArgv: [],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });

/** A taken address is a configuration problem the user can fix: say which one. */
async function listening<T>(addr: { host: string; port: number }, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'EADDRINUSE' || code === 'EADDRNOTAVAIL' || code === 'EACCES') {
      throw new CliError(ExitCode.failed, `cannot listen on ${addr.host}:${addr.port} (${code})`);
    }
    throw err;
  }
}
