// A throwaway PostgreSQL cluster we own end to end, so restart/fault tests can stop and
// start the server without touching the shared system cluster on :5432.
import { execFile, spawnSync } from 'node:child_process';
import { chown, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../support/free-port';

const run = promisify(execFile);

export type StopMode = 'smart' | 'fast' | 'immediate';

export type PostgresCluster = {
  /** postgres://postgres@127.0.0.1:PORT/postgres (trust auth, no password) */
  url: string;
  port: number;
  /** Temp dir holding data/, the unix socket and server.log (read it when a test fails). */
  dir: string;
  /** pg_ctl stop; 'fast' by default, 'immediate' simulates a crash. */
  stop(mode?: StopMode): Promise<void>;
  /** Starts again on the same port and data directory. */
  start(): Promise<void>;
  /** Stops (if running) and removes the whole directory. */
  destroy(): Promise<void>;
};

// Newest installed major wins, e.g. /usr/lib/postgresql/15/bin.
async function findBinDir(): Promise<string> {
  const root = '/usr/lib/postgresql';
  const versions = (await readdir(root).catch(() => [] as string[]))
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error(`No PostgreSQL binaries under ${root}/*/bin`);
  return join(root, versions[0], 'bin');
}

// initdb/postgres refuse to run as root, so every server command runs as the postgres user.
function asPostgres(bin: string, args: string[]): string[] {
  return process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', bin, ...args] : [bin, ...args];
}

async function exec(argv: string[]): Promise<void> {
  try {
    await run(argv[0], argv.slice(1), { timeout: 60_000 });
  } catch (err: any) {
    throw new Error(`${argv.join(' ')} failed: ${err.stderr || err.stdout || err.message}`);
  }
}

export type ClusterOptions = {
  /** Extra server settings, `-c name=value` each: `{ wal_level: 'logical' }` for CDC suites. */
  settings?: Record<string, string | number>;
  /**
   * A hot standby of this cluster instead of a new one: a base backup of it (pg_basebackup -R),
   * then streaming replication from it for as long as both run.
   */
  standbyOf?: { port: number };
};

export async function startPostgresCluster(options: ClusterOptions = {}): Promise<PostgresCluster> {
  const bin = await findBinDir();
  const dir = await mkdtemp(join(tmpdir(), 'sluice-pg-'));
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  if (process.getuid?.() === 0) {
    const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout);
    await chown(dir, id('-u'), id('-g'));
  }
  const port = await freePort();
  const pgCtl = join(bin, 'pg_ctl');
  // fsync=off: speed only; stop -m immediate still loses nothing, only an OS crash would.
  const extra = Object.entries(options.settings ?? {}).map(([k, v]) => ` -c ${k}=${v}`);
  const serverOpts = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off${extra.join('')}`;
  let running = false;

  // Safety net: a crashed test run must not leave a postmaster behind.
  const onExit = () => {
    if (!running) return;
    const [cmd, ...args] = asPostgres(pgCtl, ['-D', dataDir, '-m', 'immediate', 'stop']);
    spawnSync(cmd, args);
  };
  process.once('exit', onExit);

  const start = async () => {
    // -l keeps the postmaster's stdout off our pipe, otherwise execFile never resolves.
    await exec(
      asPostgres(pgCtl, ['-D', dataDir, '-l', logFile, '-o', serverOpts, '-w', '-t', '60', 'start']),
    );
    running = true;
  };
  const stop = async (mode: StopMode = 'fast') => {
    await exec(asPostgres(pgCtl, ['-D', dataDir, '-m', mode, '-w', 'stop']));
    running = false;
  };

  const initdbArgs = ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync'];
  const backupArgs = (from: number) => {
    const source = ['-h', '127.0.0.1', '-p', String(from), '-U', 'postgres'];
    return ['-D', dataDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync', ...source];
  };
  try {
    if (options.standbyOf)
      await exec(asPostgres(join(bin, 'pg_basebackup'), backupArgs(options.standbyOf.port)));
    else await exec(asPostgres(join(bin, 'initdb'), initdbArgs));
    await start();
  } catch (err) {
    // pg_ctl -w can time out with a postmaster still coming up; don't leave it behind.
    await stop('immediate').catch(() => {});
    process.off('exit', onExit);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }

  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    stop,
    start,
    async destroy() {
      // The data is thrown away, so there is nothing for a fast shutdown to preserve.
      if (running) await stop('immediate').catch(() => {});
      process.off('exit', onExit);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** CREATE DATABASE on the cluster behind `url`; returns the new database's URL. */
export async function createDatabase(url: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
  const next = new URL(url);
  next.pathname = `/${encodeURIComponent(name)}`;
  return next.toString();
}
