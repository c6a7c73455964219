// `npm run bench:cdc-mysql`: the MySQL/MariaDB change stream (packages/connectors/src/mysql/
// changes) against Debian's `mariadb-binlog` decoding the same binlog from the same server to
// /dev/null (`--read-from-remote-server --base64-output=DECODE-ROWS -v`: every row event
// decoded to text, the decode limit), in one run, ratio printed. Not a test: it prints figures;
// docs/benchmarks.md records them.
//
// A throwaway MariaDB (test/peers/mariadb-server.ts) gets BENCH_CHANGES changes, mixed: inserts
// in transactions of 100 rows, then updates and deletes of 100 rows each. Sluice reads them in
// one run (max_changes above the count), consuming the change rows as a sink would; the load
// average is printed with the figures.
//
//   BENCH_CHANGES=300000   changes to read
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { egressPolicy } from '../packages/connectors/src/egress';
import { mysql, mysqlConfigSchema } from '../packages/connectors/src/mysql/index';
import { defaultLimits } from '../packages/connectors/src/types';
import { startMariadbServer } from '../test/peers/mariadb-server';
import { stepContext } from '../test/support/step-context';

const CHANGES = Number(process.env.BENCH_CHANGES ?? 300_000);
const load = () => os.loadavg()[0].toFixed(2);

const server = await startMariadbServer();
try {
  const db = await server.connect();
  await db.query('CREATE DATABASE shop CHARACTER SET utf8mb4');
  await db.query('USE shop');
  await db.query(`CREATE TABLE orders (id BIGINT UNSIGNED PRIMARY KEY, qty INT NOT NULL,
    amount DECIMAL(12,2) NOT NULL, at DATETIME(6) NOT NULL, note VARCHAR(64))`);
  const connection = {
    config: mysqlConfigSchema.parse({
      host: '127.0.0.1',
      port: server.port,
      database: 'shop',
      user: 'root',
      allow_private_hosts: true,
      statement_timeout_seconds: 300,
    }),
    credentials: { password: '' },
  };
  const ctx = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };
  const op = { operation_type: 'cdc', tables: ['shop.orders'], max_changes: 10_000_000, max_seconds: 3600 };
  const start = await mysql.changes.read(
    connection,
    stepContext({ kind: 'source', data_source_ref: 'db', operation: { ...op, snapshot: 'never' } }),
    'bench',
    ctx,
  );
  if (start.payload.kind === 'rows') for await (const _ of start.payload.batches);
  const cursor = await start.nextCursor();
  const [[{ File: firstFile, Position: firstPos }]] = (await db.query('SHOW MASTER STATUS')) as any;

  // The workload: 3/5 inserts, 1/5 updates, 1/5 deletes, 100 rows a transaction.
  const inserts = Math.floor((CHANGES * 3) / 5 / 100) * 100;
  const t0 = Date.now();
  for (let i = 0; i < inserts; i += 100) {
    const rows = Array.from(
      { length: 100 },
      (_, k) =>
        `(${i + k}, ${k}, ${(i + k) / 100}, '2024-01-02 03:04:05.${String(k).padStart(6, '0')}', 'n${i + k}')`,
    );
    await db.query(`INSERT INTO orders VALUES ${rows.join(',')}`);
  }
  for (let i = 0; i < inserts / 3; i += 100)
    await db.query(`UPDATE orders SET qty = qty + 1 WHERE id >= ${i} AND id < ${i + 100}`);
  for (let i = inserts / 3; i < (2 * inserts) / 3; i += 100)
    await db.query(`DELETE FROM orders WHERE id >= ${i} AND id < ${i + 100}`);
  const total = inserts + (2 * inserts) / 3;
  console.log(`workload: ${total} changes written in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  await db.end();

  // Baseline: mariadb-binlog decoding the same binlog from the server to /dev/null.
  const b0 = process.hrtime.bigint();
  execFileSync(
    'mariadb-binlog',
    [
      '--read-from-remote-server',
      '--host=127.0.0.1',
      `--port=${server.port}`,
      '--user=root',
      `--start-position=${firstPos}`,
      '--base64-output=DECODE-ROWS',
      '-v',
      '--to-last-log',
      firstFile,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'], maxBuffer: 1 << 30 },
  );
  const baseSeconds = Number(process.hrtime.bigint() - b0) / 1e9;

  // Sluice: one run from the committed position, every change row consumed.
  const s0 = process.hrtime.bigint();
  const out = await mysql.changes.read(
    connection,
    stepContext({ kind: 'source', data_source_ref: 'db', operation: op }, { cursor }),
    'bench',
    ctx,
  );
  let read = 0;
  if (out.payload.kind !== 'rows') throw new Error('rows expected');
  for await (const batch of out.payload.batches) read += batch.length;
  await out.nextCursor();
  const ourSeconds = Number(process.hrtime.bigint() - s0) / 1e9;
  if (read !== total) throw new Error(`read ${read} changes, expected ${total}`);

  const base = total / baseSeconds;
  const ours = total / ourSeconds;
  console.log(
    `mariadb-binlog (decode to /dev/null): ${Math.round(base)} changes/s (${baseSeconds.toFixed(2)} s)`,
  );
  console.log(
    `sluice mysql changes read:            ${Math.round(ours)} changes/s (${ourSeconds.toFixed(2)} s)`,
  );
  console.log(`ratio sluice / mariadb-binlog: ${(ours / base).toFixed(2)}   load average: ${load()}`);
} finally {
  await server.destroy();
}
