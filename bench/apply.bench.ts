// `npm run bench:apply`: the apply sink mode (docs/pipeline-spec.md, "apply: change rows") on
// the PostgreSQL and MySQL sinks against the same sink's upsert of as many plain rows, in one
// run. Not a test: it prints figures; docs/benchmarks.md records them.
//
// Each sink writes straight through the connector (no platform, no worker). Both tables start
// with the same N/2 rows (loaded untimed); the apply payload is N change rows of random keys
// (an insert where the key is gone, else one in five a delete and the rest updates, a quarter
// of them without `doc`, as unchanged TOAST values come), the baseline the same N rows' table
// columns upserted by key. Afterwards the applied table must hold exactly the keys still live.
//
//   BENCH_CHANGES=100000,1000000   change counts, comma-separated
//   BENCH_TARGETS=PostgreSQL       only these sinks (PostgreSQL, MariaDB), comma-separated
//   SLUICE_TEST_PG_URL             postgres://postgres@127.0.0.1:5432/postgres
//   SLUICE_TEST_MYSQL_HOST/PORT    127.0.0.1 / 3306 (root, no password)
import os from 'node:os';
import type { Payload } from '@sluice/engine';
import mysqlDriver from 'mysql2/promise';
import pg from 'pg';
import { egressPolicy } from '../packages/connectors/src/egress';
import { mysql, mysqlConfigSchema } from '../packages/connectors/src/mysql/index';
import { postgres, postgresConfigSchema } from '../packages/connectors/src/postgres/index';
import { compactChanges } from '../packages/connectors/src/relational/changes';
import { defaultLimits } from '../packages/connectors/src/types';
import { stepContext } from '../test/support/step-context';

const ONLY = process.env.BENCH_TARGETS?.split(',');
const COUNTS = (process.env.BENCH_CHANGES ?? '100000').split(',').map(Number);
const PG = new URL(process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const MY_HOST = process.env.SLUICE_TEST_MYSQL_HOST ?? '127.0.0.1';
const MY_PORT = Number(process.env.SLUICE_TEST_MYSQL_PORT ?? 3306);
const DB = `sluice_bench_apply_${process.pid}`;
const ctx = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };
const META = ['_op', '_table', '_position', '_committed_at', '_unchanged'];
const COLS = ['id', 'name', 'doc', 'n'];
const load = () => os.loadavg()[0].toFixed(1);

function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The N/2 rows both tables start with. */
function initial(n: number): unknown[][] {
  return Array.from({ length: n / 2 }, (_, i) => [i + 1, `first ${i + 1}`, `doc ${i + 1} `.repeat(4), 0]);
}

/** N change rows over the N/2 keys, and the number of keys live at the end. */
function workload(n: number): { rows: unknown[][]; live: number } {
  const r = random(n);
  const live = new Set<number>(Array.from({ length: n / 2 }, (_, i) => i + 1));
  const rows: unknown[][] = [];
  for (let i = 0; i < n; i++) {
    const id = 1 + Math.floor(r() * (n / 2));
    const op = !live.has(id) ? 'insert' : r() < 0.2 ? 'delete' : 'update';
    if (op === 'delete') live.delete(id);
    else live.add(id);
    const partial = op === 'update' && r() < 0.25;
    rows.push([
      op,
      'public.items',
      `0/${i.toString(16)}`,
      '2026-01-05T00:00:00Z',
      partial ? '["doc"]' : null,
      id,
      op === 'delete' ? null : `name ${i}`,
      op === 'delete' || partial ? null : `doc ${i} `.repeat(4),
      op === 'delete' ? null : i,
    ]);
  }
  return { rows, live: live.size };
}

function payload(rows: unknown[][], columns: string[]): Payload {
  return {
    kind: 'rows',
    columns: columns.map((name) => ({ name, type: name === 'id' || name === 'n' ? 'integer' : 'text' })),
    batches: (async function* () {
      for (let i = 0; i < rows.length; i += 10_000) yield rows.slice(i, i + 10_000);
    })(),
  };
}

async function timed(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

async function main() {
  const admin = new pg.Client({ connectionString: PG.toString() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${DB}`);
  const dbUrl = new URL(PG);
  dbUrl.pathname = `/${DB}`;
  const db = new pg.Client({ connectionString: dbUrl.toString() });
  await db.connect();
  const my = await mysqlDriver.createConnection({ host: MY_HOST, port: MY_PORT, user: 'root' });
  await my.query(`CREATE DATABASE ${DB}`);
  await my.query(`USE ${DB}`);
  const targets = [
    {
      name: 'PostgreSQL',
      sink: postgres.sink,
      conn: {
        config: postgresConfigSchema.parse({
          host: PG.hostname,
          port: Number(PG.port || 5432),
          database: DB,
          user: decodeURIComponent(PG.username || 'postgres'),
          allow_private_hosts: true,
        }),
        credentials: { password: decodeURIComponent(PG.password) || 'unused' },
      },
      create: (t: string) => db.query(`CREATE TABLE ${t} (id int PRIMARY KEY, name text, doc text, n int)`),
      count: async (t: string) => Number((await db.query(`SELECT count(*) AS c FROM ${t}`)).rows[0].c),
      drop: (t: string) => db.query(`DROP TABLE ${t}`),
    },
    {
      name: 'MariaDB',
      sink: mysql.sink,
      conn: {
        config: mysqlConfigSchema.parse({
          host: MY_HOST,
          port: MY_PORT,
          database: DB,
          user: 'root',
          allow_private_hosts: true,
        }),
        credentials: { password: '' },
      },
      create: (t: string) =>
        my.query(`CREATE TABLE ${t} (id INT PRIMARY KEY, name VARCHAR(100), doc TEXT, n INT) ENGINE=InnoDB`),
      count: async (t: string) =>
        Number(((await my.query(`SELECT COUNT(*) AS c FROM ${t}`))[0] as any[])[0].c),
      drop: (t: string) => my.query(`DROP TABLE ${t}`),
    },
  ];
  try {
    for (const n of COUNTS) {
      const { rows, live } = workload(n);
      const plain = rows.map((r) => r.slice(META.length));
      let compacted = { upserts: 0, deletes: 0 };
      const compactMs = await timed(async () => {
        const set = await compactChanges(payload(rows, [...META, ...COLS]) as any, ['id'], COLS);
        compacted = { upserts: set.upserts.length, deletes: set.deletes.length };
      });
      console.log(
        `${n} changes → ${compacted.upserts} upserts, ${compacted.deletes} deletes; compaction alone ${compactMs.toFixed(0)} ms (load ${load()})`,
      );
      for (const t of targets.filter((x) => !ONLY || ONLY.includes(x.name))) {
        const write = (table: string, mode: string, p: Payload) =>
          t.sink.write(
            t.conn as any,
            p,
            stepContext({
              kind: 'sink',
              data_source_ref: 'db',
              operation: { operation_type: 'sql', write: { table, mode, key: ['id'] } },
            }),
            { ...ctx, commitKey: `bench-${table}-${mode}-${n}` },
          );
        const start = async (table: string) => {
          await t.create(table);
          await write(table, 'insert', payload(initial(n), COLS));
        };
        await start('base_items');
        const baseMs = await timed(() => write('base_items', 'upsert', payload(plain, COLS)));
        await start('items');
        const applyMs = await timed(() => write('items', 'apply', payload(rows, [...META, ...COLS])));
        const got = await t.count('items');
        if (got !== live) throw new Error(`${t.name}: ${got} rows after apply, ${live} keys live`);
        const baseRate = n / (baseMs / 1000);
        const applyRate = n / (applyMs / 1000);
        console.log(
          `  ${t.name}: upsert of ${n} rows ${baseMs.toFixed(0)} ms (${Math.round(baseRate)} rows/s); apply of ${n} changes ${applyMs.toFixed(0)} ms (${Math.round(applyRate)} changes/s); ratio ${(applyRate / baseRate).toFixed(2)} (load ${load()})`,
        );
        await t.drop('base_items');
        await t.drop('items');
      }
    }
  } finally {
    await db.end();
    await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
    await admin.end();
    await my.query(`DROP DATABASE IF EXISTS ${DB}`);
    await my.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
