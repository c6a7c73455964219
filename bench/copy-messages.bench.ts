// `npm run bench:copy-messages`: what the size of COPY's CopyData messages costs the target's
// backend (issue 26 item 8). The same 1M rows of bench:pipeline's table go into one
// `COPY … FROM STDIN (FORMAT binary)` as PostgreSQL's `COPY … TO STDOUT` frames them (one
// message a row, the header riding on the first: what the PostgreSQL → PostgreSQL
// pass-through forwards) and as messages of BENCH_MESSAGE_SIZES bytes, through the sink's own
// writer (copy-frames-in.ts), beside the limit (the server's COPY FROM the file). Prints the
// backend's CPU (/proc/<pid>/schedstat, ns) per variant, rounds in alternating order.
// Not a test: docs/benchmarks.md records the figures.
//
//   BENCH_ROUNDS=6
//   BENCH_MESSAGE_SIZES=65536,262144
//   BENCH_PARSE_ONLY=1     `WHERE false` on every COPY: rows parsed, none stored, so the
//                          messages' share of the backend's work stands out
import fs from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { copyFramesIn } from '../packages/connectors/src/postgres/copy-frames-in';
import { createDatabase, dbUrl, dropDatabase, fillRows, ROW_COLUMNS, sql } from './pipeline-support';

const DB = `sluice_bench_msg_${process.pid}`;
const FILE = `/tmp/sluice_bench_msg_${process.pid}.bin`;
const N = 1_000_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SIZES = (process.env.BENCH_MESSAGE_SIZES ?? '65536,262144').split(',').map(Number);
const WHERE = process.env.BENCH_PARSE_ONLY === '1' ? ' WHERE false' : '';
const load = () => os.loadavg()[0].toFixed(1);

const cpuMs = (pid: number) => Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;

/** The CopyData messages of a binary COPY file as COPY TO STDOUT sends them, in ~64 KB socket-sized chunks. */
function perRow(file: Buffer): Buffer[] {
  const message = (body: Buffer) => {
    const m = Buffer.allocUnsafe(5 + body.length);
    m[0] = 0x64;
    m.writeUInt32BE(body.length + 4, 1);
    body.copy(m, 5);
    return m;
  };
  const messages: Buffer[] = [];
  let start = 0;
  let p = 19 + file.readUInt32BE(15);
  for (;;) {
    const fields = file.readInt16BE(p);
    p += 2;
    for (let i = 0; i < fields; i++) {
      const n = file.readInt32BE(p);
      p += 4 + Math.max(n, 0);
    }
    messages.push(message(file.subarray(start, p)));
    start = p;
    if (fields === -1) break;
  }
  const chunks: Buffer[] = [];
  for (let i = 0; i < messages.length; ) {
    const run: Buffer[] = [];
    let size = 0;
    while (i < messages.length && (size === 0 || size + messages[i].length <= 65536)) {
      size += messages[i].length;
      run.push(messages[i++]);
    }
    chunks.push(Buffer.concat(run));
  }
  return chunks;
}

async function copy(chunks: Buffer[] | null, unframed: boolean): Promise<{ cpu: number; ms: number }> {
  const c = new pg.Client({ connectionString: dbUrl(DB), application_name: 'sluice-bench' });
  await c.connect();
  try {
    await c.query('truncate dst');
    await c.query('checkpoint');
    const pid = (await c.query('select pg_backend_pid() as pid')).rows[0].pid as number;
    await c.query('begin');
    const cpu = cpuMs(pid);
    const started = performance.now();
    let rows: number;
    if (chunks === null)
      rows = (await c.query(`COPY dst FROM '${FILE}' (FORMAT binary)${WHERE}`)).rowCount ?? 0;
    else {
      const it = (async function* () {
        yield* chunks;
      })();
      rows = await copyFramesIn(c, `COPY dst FROM STDIN (FORMAT binary)${WHERE}`, it, () => {}, unframed);
    }
    const ms = performance.now() - started;
    const used = cpuMs(pid) - cpu;
    await c.query('commit');
    if (rows !== (WHERE ? 0 : N)) throw new Error(`loaded ${rows} rows`);
    return { cpu: used, ms };
  } finally {
    await c.end();
  }
}

async function main() {
  await dropDatabase(DB);
  await createDatabase(DB);
  try {
    await fillRows(DB, 'src', N);
    await sql(DB, `create table dst (${ROW_COLUMNS})`);
    await sql(DB, `COPY src TO '${FILE}' (FORMAT binary)`);
    const file = fs.readFileSync(FILE);
    const variants = [
      { label: 'one message a row', chunks: perRow(file), unframed: false },
      ...SIZES.map((size) => {
        const chunks: Buffer[] = [];
        for (let p = 0; p < file.length; p += size)
          chunks.push(file.subarray(p, Math.min(file.length, p + size)));
        return { label: `messages of ${size / 1024} KB`, chunks, unframed: true };
      }),
    ];
    console.log(
      `COPY FROM STDIN of ${N.toLocaleString('en')} rows (${(file.length / 1e6).toFixed(1)} MB binary)${WHERE ? ', parse only (WHERE false)' : ''}; load ${load()}`,
    );
    await copy(null, false); // the first large COPY warms WAL segments and caches: not counted
    const seen = new Map<string, number[]>();
    for (let r = 0; r < ROUNDS; r++) {
      const order = [{ label: 'limit (COPY FROM the file)', chunks: null, unframed: false }, ...variants];
      if (r % 2 === 1) order.reverse();
      const line: string[] = [];
      for (const v of order) {
        const m = await copy(v.chunks, v.unframed);
        seen.set(v.label, [...(seen.get(v.label) ?? []), m.cpu]);
        line.push(`${v.label} ${m.cpu.toFixed(0)} ms CPU / ${m.ms.toFixed(0)} ms`);
      }
      console.log(`  round ${r + 1} (load ${load()}): ${line.join('; ')}`);
    }
    for (const [label, cpu] of seen) {
      const s = [...cpu].sort((a, b) => a - b);
      console.log(
        `  ${label.padEnd(28)} backend CPU median ${s[Math.floor(s.length / 2)].toFixed(0)} ms (${s[0].toFixed(0)}–${s[s.length - 1].toFixed(0)})`,
      );
    }
  } finally {
    fs.rmSync(FILE, { force: true });
    await dropDatabase(DB);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
