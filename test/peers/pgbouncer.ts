import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { aptInstall } from '../support/apt';
import { freePort } from '../support/free-port';

// Debian's PgBouncer (1.18: no protocol-level prepared statements) on a free loopback port, in
// front of the test PostgreSQL server, in transaction pooling mode: what most production stores
// sit behind. Trust authentication both ways (the user must still be listed in the auth file).
// PgBouncer refuses to run as root, so as root it drops to `nobody` (`-u`), which then needs to
// read the configuration.

export type PgBouncerPeer = {
  port: number;
  /** `serverUrl` with its host and port replaced by the pooler's (same user, database). */
  urlFor(serverUrl: string): string;
  /** A statement on the admin console (`SHOW STATS`, `SHOW POOLS`, …): simple protocol only. */
  admin(command: string): Promise<any[]>;
  /** Everything PgBouncer wrote to stderr (its log). */
  log(): string;
  close(): Promise<void>;
};

const BIN = '/usr/sbin/pgbouncer';

async function accepting(port: number, user: string, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const c = new pg.Client({ host: '127.0.0.1', port, user, database: 'pgbouncer' });
    try {
      await c.connect();
      await c.end();
      return true;
    } catch {
      await c.end().catch(() => {});
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return false;
}

/**
 * PgBouncer forwarding every database name to the server of `serverUrl` (same host, port, user,
 * password), `pool_mode = transaction`, at most `poolSize` server connections per database.
 */
export async function startPgBouncer(opts: { serverUrl: string; poolSize?: number }): Promise<PgBouncerPeer> {
  await aptInstall(['pgbouncer'], [BIN]);
  const server = new URL(opts.serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const password = decodeURIComponent(server.password);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-pgbouncer-'));
  fs.chmodSync(dir, 0o755);
  const port = await freePort();
  const target = [`host=${server.hostname}`, `port=${server.port || 5432}`, `user=${user}`];
  if (password) target.push(`password=${password}`);
  const ini = [
    '[databases]',
    // The fallback entry: any database name goes to the same name on the server.
    `* = ${target.join(' ')}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    // No Unix socket: its fixed name in a shared directory would collide between suites.
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${path.join(dir, 'users.txt')}`,
    `admin_users = ${user}`,
    'pool_mode = transaction',
    `default_pool_size = ${opts.poolSize ?? 20}`,
    'max_client_conn = 500',
    // pg and pg-boss send nothing else at startup; listed so a driver upgrade shows up here.
    'ignore_startup_parameters = extra_float_digits',
  ];
  fs.writeFileSync(path.join(dir, 'pgbouncer.ini'), `${ini.join('\n')}\n`, { mode: 0o644 });
  fs.writeFileSync(path.join(dir, 'users.txt'), `"${user}" ""\n`, { mode: 0o644 });

  const asRoot = process.getuid?.() === 0;
  const args = [...(asRoot ? ['-u', 'nobody'] : []), path.join(dir, 'pgbouncer.ini')];
  let output = '';
  const child: ChildProcess = spawn(BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d) => {
    output += d.toString();
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  if (!(await accepting(port, user, 10_000))) {
    await stop();
    throw new Error(`pgbouncer did not start: ${output.slice(0, 1000)}`);
  }
  return {
    port,
    urlFor(serverUrl) {
      const u = new URL(serverUrl);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    async admin(command) {
      const c = new pg.Client({ host: '127.0.0.1', port, user, database: 'pgbouncer' });
      await c.connect();
      try {
        return (await c.query(command)).rows;
      } finally {
        await c.end();
      }
    },
    log: () => output,
    close: stop,
  };
}
