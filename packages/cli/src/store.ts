import path from 'node:path';
import type { Writable } from 'node:stream';
import type { Config, Runtime, WarmStart } from '@sluice/server';
import { CliError, ExitCode } from './exit';

// Server code is imported lazily so `--help` and the HTTP commands start fast.
export const loadServer = () => import('@sluice/server');

/** The configuration (flags override the environment); a bad value is a usage error. */
export async function configFrom(overrides: Record<string, string | undefined> = {}): Promise<Config> {
  const server = await loadServer();
  try {
    return server.loadConfig(overrides);
  } catch (err) {
    if (err instanceof server.ConfigError) throw new CliError(ExitCode.failed, err.message);
    throw err;
  }
}

/** Where the data lives, for people; never prints DATABASE_URL (it may hold a password). */
export function describeStore(config: Config): string {
  return config.databaseUrl
    ? 'PostgreSQL server (DATABASE_URL)'
    : `embedded, data directory ${path.resolve(config.dataDir)}`;
}

/** Where `serve` reads lists from with DATABASE_READ_URL (docs/operations.md#read-replicas), for its ready lines. */
export function describeReads(config: Config, state: { usable: boolean; reason: string }): string {
  const bound = `at most ${config.reads?.maxLagMs} ms behind`;
  return state.usable
    ? `the read replica (DATABASE_READ_URL, ${bound})`
    : `the store for now: the read replica (DATABASE_READ_URL) is not usable, ${state.reason}`;
}

/**
 * What a worker's warm start loaded (docs/operations.md#a-workers-warm-start), for its ready
 * lines: `http, postgres and transforms loaded (0.18 s)`, or that nothing is deployed.
 */
export function describeWarmStart(w: WarmStart): string {
  const what = [...w.types, ...(w.transforms ? ['transforms'] : [])];
  if (what.length === 0) return 'nothing deployed to load';
  const list = what.length === 1 ? what[0] : `${what.slice(0, -1).join(', ')} and ${what[what.length - 1]}`;
  const through = w.exercisedThrough ? ` read through the ${w.exercisedThrough} source` : '';
  const exercised = w.exercised != null ? `, a transform run on made-up records${through}` : '';
  const planned = w.planned > 0 ? `, ${w.planned} deployed spec${w.planned === 1 ? '' : 's'} planned` : '';
  const failed = w.failed.length > 0 ? `; could not load ${w.failed.join(', ')} (see the log)` : '';
  return `${list} loaded${exercised}${planned} (${(w.ms / 1000).toFixed(2)} s)${failed}`;
}

/** The embedded store is held by another process (a running `sluice serve`): exit 3. */
export class StoreHeldError extends CliError {
  constructor(message: string) {
    super(ExitCode.storeUnavailable, message);
  }
}

/** Opens (and migrates) the store and the queue; a held or unreachable store exits 3. */
export async function openStoreRuntime(
  config: Config,
  opts: { logStream?: Writable; supervise?: boolean; warmPool?: boolean; reads?: boolean } = {},
): Promise<Runtime> {
  const server = await loadServer();
  try {
    return await server.openRuntime(config, opts);
  } catch (err) {
    if (err instanceof server.DataDirLockedError) throw new StoreHeldError(err.message);
    if (err instanceof server.DataDirVersionError) throw new CliError(ExitCode.storeUnavailable, err.message);
    const e = err as Error & { code?: string };
    throw new CliError(
      ExitCode.storeUnavailable,
      `cannot open the store (${describeStore(config)}): ${e.code ? `${e.code} ` : ''}${e.message}`,
    );
  }
}

/**
 * Runs one maintenance step on the store this process opens (logs to stderr, stdout keeps only the
 * command's result, no queue supervision), then closes it.
 */
export async function withStoreRuntime<T>(
  work: (server: Awaited<ReturnType<typeof loadServer>>, rt: Runtime) => Promise<T>,
): Promise<T> {
  const server = await loadServer();
  const config = await configFrom();
  const rt = await openStoreRuntime(config, { logStream: process.stderr, supervise: false });
  try {
    return await work(server, rt);
  } finally {
    await rt.close();
  }
}

/**
 * Once at start of a process that sends mail: without SLUICE_SMTP_URL every mail goes to the log
 * (docs/operations.md "Mail"), which an operator should know before expecting one in a mailbox.
 */
export function warnIfMailGoesToLog(config: Config, log: { warn(obj: object, msg: string): void }) {
  if (config.smtpUrl) return;
  log.warn(
    { smtp: 'unset' },
    'SLUICE_SMTP_URL is unset: every mail (email verification, invitation, alert) is written to this log instead of being sent',
  );
}
