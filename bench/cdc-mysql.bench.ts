// `npm run bench:cdc-mysql`: the MySQL/MariaDB change stream (packages/connectors/src/mysql/
// changes) against Debian's `mariadb-binlog` decoding the same binlog from the same server to
// /dev/null (`--read-from-remote-server --base64-output=DECODE-ROWS -v`: every row event
// decoded to text, the decode limit), in one run, ratio printed. Not a test: it prints figures;
// docs/benchmarks.md records them.
//
// A throwaway MariaDB (test/peers/mariadb-server.ts) gets BENCH_CHANGES changes, mixed: inserts
// in transactions of 100 rows, then updates and deletes of 100 rows each. Three readers then
// read the same binlog: `mariadb-binlog`; the binlog library alone (@vlasky/zongji with the
// capture's connection options, every row decoded and dropped: the library's own limit); and
// Sluice, one run (max_changes above the count), consuming the change rows as a sink would.
// Printed: each rate, the CPU seconds of each reader (the two Node readers: this process's;
// `mariadb-binlog`: its own, from /proc/self/stat's children times, 10 ms ticks, Linux only; the
// machine is shared, so CPU is steadier than wall time), the ratios of wall and of CPU, the
// resident memory when the read started and its peak during the read, and the load average.
//
//   BENCH_CHANGES=300000          changes to read; a list (300000,3000000) runs each in turn
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import ZongJi from '@vlasky/zongji';
import { egressPolicy } from '../packages/connectors/src/egress';
import { mysql, mysqlConfigSchema } from '../packages/connectors/src/mysql/index';
import { defaultLimits } from '../packages/connectors/src/types';
import { startMariadbServer } from '../test/peers/mariadb-server';
import { stepContext } from '../test/support/step-context';

const COUNTS = String(process.env.BENCH_CHANGES ?? '300000')
  .split(',')
  .map((n) => Number(n.trim()));
const load = () => os.loadavg()[0].toFixed(2);
const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB`;
const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const since = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e9;
/** CPU seconds of the children this process waited for (Linux: /proc/self/stat), or null. */
const childCpuSeconds = (): number | null => {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    // cutime and cstime: fields 16 and 17 of the whole line, in clock ticks (100 a second).
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return null;
  }
};

/** The library alone from `file:pos`: rows decoded with the capture's options and dropped. */
function libraryAlone(port: number, file: string, pos: number, total: number): Promise<void> {
  return new Promise((resolve, reject) => {
    // The options the capture's control session has (connect.ts, stream.ts): text dates and
    // big numbers, UTC.
    const zongji = new ZongJi({
      host: '127.0.0.1',
      port,
      user: 'root',
      dateStrings: true,
      supportBigNumbers: true,
      bigNumberStrings: true,
      timezone: 'Z',
    });
    let rows = 0;
    zongji.on('binlog', (e: any) => {
      if (!e.rows) return;
      rows += e.rows.length;
      if (rows >= total) {
        zongji.stop();
        resolve();
      }
    });
    zongji.on('error', reject);
    zongji.start({
      filename: file,
      position: pos,
      serverId: 0x20000000 + Math.floor(Math.random() * 0xfffffff),
      includeSchema: { shop: ['orders'] },
    });
  });
}

async function measure(changes: number): Promise<void> {
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
    const inserts = Math.floor((changes * 3) / 5 / 100) * 100;
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
    console.log(`\n${total} changes written in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await db.end();

    // Baseline: mariadb-binlog decoding the same binlog from the server to /dev/null.
    const b0 = process.hrtime.bigint();
    const bc0 = childCpuSeconds();
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
    const baseSeconds = since(b0);
    const bc1 = childCpuSeconds();
    const baseCpu = bc0 === null || bc1 === null ? null : bc1 - bc0;

    // The library alone.
    const l0 = process.hrtime.bigint();
    const lc0 = cpuSeconds();
    await libraryAlone(server.port, firstFile, Number(firstPos), total);
    const libSeconds = since(l0);
    const libCpu = cpuSeconds() - lc0;

    // Sluice: one run from the committed position, every change row consumed.
    global.gc?.();
    const rssStart = process.memoryUsage.rss();
    let rssPeak = rssStart;
    const sample = () => {
      rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
    };
    const sampler = setInterval(sample, 50);
    const s0 = process.hrtime.bigint();
    const sc0 = cpuSeconds();
    const out = await mysql.changes.read(
      connection,
      stepContext({ kind: 'source', data_source_ref: 'db', operation: op }, { cursor }),
      'bench',
      ctx,
    );
    let read = 0;
    if (out.payload.kind !== 'rows') throw new Error('rows expected');
    for await (const batch of out.payload.batches) {
      read += batch.length;
      sample();
    }
    await out.nextCursor();
    const ourSeconds = since(s0);
    const ourCpu = cpuSeconds() - sc0;
    clearInterval(sampler);
    if (read !== total) throw new Error(`read ${read} changes, expected ${total}`);

    const rate = (seconds: number) => `${Math.round(total / seconds)} changes/s`.padStart(18);
    const baseCpuText = baseCpu === null ? '' : `, ${baseCpu.toFixed(2)} s CPU`;
    console.log(
      `mariadb-binlog (decode to /dev/null): ${rate(baseSeconds)} (${baseSeconds.toFixed(2)} s${baseCpuText})`,
    );
    console.log(
      `@vlasky/zongji alone (decode, drop):  ${rate(libSeconds)} (${libSeconds.toFixed(2)} s, ${libCpu.toFixed(2)} s CPU)`,
    );
    console.log(
      `sluice mysql changes read:            ${rate(ourSeconds)} (${ourSeconds.toFixed(2)} s, ${ourCpu.toFixed(2)} s CPU)`,
    );
    console.log(
      `ratio sluice / mariadb-binlog: ${(baseSeconds / ourSeconds).toFixed(2)}   ` +
        `sluice / library: ${(libSeconds / ourSeconds).toFixed(2)} (CPU ${(libCpu / ourCpu).toFixed(2)})   ` +
        `library / mariadb-binlog: ${(baseSeconds / libSeconds).toFixed(2)}`,
    );
    if (baseCpu !== null)
      console.log(
        `CPU ratio sluice / mariadb-binlog: ${(baseCpu / ourCpu).toFixed(2)}   ` +
          `library / mariadb-binlog: ${(baseCpu / libCpu).toFixed(2)}`,
      );
    console.log(
      `RSS when the read started: ${mib(rssStart)}, peak during the read: ${mib(rssPeak)}   load average: ${load()}`,
    );
  } finally {
    await server.destroy();
  }
}

for (const n of COUNTS) await measure(n);
