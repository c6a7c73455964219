// A throwaway MariaDB server with the binlog on (row-based, full images), owned by one suite,
// so CDC tests can restart it and purge its binlogs without touching the system MariaDB on
// :3306. Root without a password on 127.0.0.1.
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { freePort } from '../support/free-port';

const run = promisify(execFile);

export type MariadbServer = {
  host: '127.0.0.1';
  port: number;
  /** Temp dir holding data/, the binlogs (binlog.*), the socket and server.log. */
  dir: string;
  /** The binlog files' path prefix (for mariadb-binlog). */
  binlogBase: string;
  /** A root connection (the caller ends it). */
  connect(database?: string): Promise<mysql.Connection>;
  /** Shuts down cleanly (SIGTERM), or at once with `kill: true` (SIGKILL). */
  stop(opts?: { kill?: boolean }): Promise<void>;
  /** Starts again on the same port and data directory. */
  start(): Promise<void>;
  /** Stops (if running) and removes the whole directory. */
  destroy(): Promise<void>;
};

export type MariadbOptions = {
  /** Extra server options, `--name=value` each (`{ 'binlog-format': 'MIXED' }`). */
  settings?: Record<string, string | number>;
};

// mariadbd refuses to run as root unless told so; the mysql user owns the files instead.
function mysqlIds(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'mysql'], { encoding: 'utf8' }).stdout);
  const uid = id('-u');
  return Number.isInteger(uid) && uid > 0 ? { uid, gid: id('-g') } : null;
}

export async function startMariadbServer(options: MariadbOptions = {}): Promise<MariadbServer> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-mariadb-'));
  const dataDir = join(dir, 'data');
  const socket = join(dir, 'mariadb.sock');
  const logFile = join(dir, 'server.log');
  const binlogBase = join(dir, 'binlog');
  const ids = mysqlIds();
  if (ids) await chown(dir, ids.uid, ids.gid);
  const user = ids ? ['--user=mysql'] : [];
  const port = await freePort();
  const settings = {
    'binlog-format': 'ROW',
    'binlog-row-image': 'FULL',
    'binlog-row-metadata': 'FULL',
    ...options.settings,
  };
  const args = [
    '--no-defaults',
    ...user,
    `--datadir=${dataDir}`,
    `--socket=${socket}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--pid-file=${join(dir, 'mariadb.pid')}`,
    `--log-error=${logFile}`,
    `--log-bin=${binlogBase}`,
    '--server-id=1',
    '--skip-name-resolve',
    // Speed only: these tests never survive an OS crash.
    '--innodb-flush-log-at-trx-commit=2',
    '--sync-binlog=0',
    '--innodb-buffer-pool-size=64M',
    ...Object.entries(settings).map(([k, v]) => `--${k}=${v}`),
  ];
  let child: ChildProcess | null = null;

  const onExit = () => child?.kill('SIGKILL');
  process.once('exit', onExit);

  const connect = (database?: string) =>
    mysql.createConnection({
      host: '127.0.0.1',
      port,
      user: 'root',
      database,
      dateStrings: true,
      supportBigNumbers: true,
      bigNumberStrings: true,
    });

  const start = async () => {
    const proc = spawn('/usr/sbin/mariadbd', args, { stdio: 'ignore' });
    child = proc;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`mariadbd exited at start; see ${logFile}`);
      try {
        const c = await connect();
        await c.end();
        break;
      } catch {
        if (Date.now() > deadline) throw new Error(`mariadbd did not accept connections; see ${logFile}`);
        await Promise.race([exited, new Promise((r) => setTimeout(r, 100))]);
      }
    }
  };
  const stop = async (opts: { kill?: boolean } = {}) => {
    const proc = child;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill(opts.kill ? 'SIGKILL' : 'SIGTERM');
    await exited;
    child = null;
  };

  try {
    await run(
      '/usr/bin/mariadb-install-db',
      [
        '--no-defaults',
        ...user,
        `--datadir=${dataDir}`,
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
      ],
      { timeout: 120_000 },
    );
    await start();
  } catch (err) {
    await stop({ kill: true }).catch(() => {});
    process.off('exit', onExit);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }

  return {
    host: '127.0.0.1',
    port,
    dir,
    binlogBase,
    connect,
    stop,
    start,
    async destroy() {
      await stop({ kill: true }).catch(() => {});
      process.off('exit', onExit);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
