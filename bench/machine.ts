// `npm run bench:machine`: figures of the machine itself, to tell machines apart before
// comparing the other benches across them (docs/benchmarks.md). Not a test: it prints figures.
//
// - The reference loop: 3·10⁸ additions in one JavaScript loop (the CPU and the JIT, nothing
//   else), the figure each section of docs/benchmarks.md gives for its machine.
// - A first-touched page: filling fresh memory costs the fill plus one page fault per 4 KiB
//   page; filling it again costs the fill alone. The difference over the pages is what a worker
//   pays each time it uses memory that was given back to the system (a few µs on most hosts;
//   far more under some hypervisors).
// - A page touched again after idle: memory the process filled and kept, read again one byte a
//   page right away and after it slept 10 s and 30 s, beside the process's own page faults
//   meanwhile. On most hosts idling changes nothing. Under some hypervisors the host takes back
//   its own mapping of an idle guest's memory, and every process pays for it, unseen by the guest
//   (no page fault in the process), on the first touch after the idle spell: the first burst
//   after a quiet spell then runs slow (issue 26 item 2, docs/benchmarks.md).
// - A round trip to PostgreSQL: `select 1` on one session, back to back and after the process
//   has waited 10 ms and 200 ms. A trivial run one at a time is some twenty such trips between
//   processes, most after the process was idle (issue 26 item 1, docs/benchmarks.md).
//
//   BENCH_MACHINE_ROUNDS=3   rounds of each figure
//   BENCH_MACHINE_MB=256     size of the fresh memory filled in each round, and of the memory
//                            touched again after idle
//   BENCH_MACHINE_IDLE=10,30 the idle spells (s) before a touch again ('' skips the figure)
//   SLUICE_BENCH_PG_URL      the PostgreSQL of the round trips (else SLUICE_TEST_PG_URL, else
//                            postgres://postgres@127.0.0.1:5432/postgres)

import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

const ROUNDS = Number(process.env.BENCH_MACHINE_ROUNDS ?? 3);
const MB = Number(process.env.BENCH_MACHINE_MB ?? 256);
const PAGE = 4096;

/**
 * The loop as the earlier sections of docs/benchmarks.md ran it: `node -e` of a top-level loop
 * (the same loop inside a function runs faster, so its figure would not compare).
 */
function referenceLoop(): number {
  const code =
    'let t = process.hrtime.bigint(); let x = 0; for (let i = 0; i < 3e8; i++) x += i % 7; ' +
    'console.log(Number(process.hrtime.bigint() - t) / 1e6, x > 0)';
  return Number(execFileSync(process.execPath, ['-e', code], { encoding: 'utf8' }).split(' ')[0]);
}

/** µs a first-touched page costs beyond filling it. */
function pageFault(): number {
  // allocUnsafeSlow of this size is memory the process maps now and has never touched.
  const buf = Buffer.allocUnsafeSlow(MB * 2 ** 20);
  let t0 = performance.now();
  buf.fill(1);
  const first = performance.now() - t0;
  t0 = performance.now();
  buf.fill(2);
  const again = performance.now() - t0;
  return ((first - again) * 1000) / (buf.length / PAGE);
}

/** µs a page of `buf` costs to read once (a byte a page), and the process's page faults meanwhile. */
function touchAgain(buf: Buffer): { us: number; faults: number } {
  const faults = process.resourceUsage().minorPageFault;
  const t0 = performance.now();
  let sum = 0;
  for (let i = 0; i < buf.length; i += PAGE) sum += buf[i];
  const us = ((performance.now() - t0) * 1000) / (buf.length / PAGE);
  if (sum < 0) throw new Error('unreachable');
  return { us, faults: process.resourceUsage().minorPageFault - faults };
}

/** Median µs of `select 1` on one session, each after `gapMs` of waiting (0: back to back). */
async function roundTrips(client: pg.Client, gapMs: number, count: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    if (gapMs > 0) await sleep(gapMs);
    const t0 = performance.now();
    await client.query('select 1');
    times.push((performance.now() - t0) * 1000);
  }
  return times.sort((a, b) => a - b)[times.length >> 1];
}

const fmt = (xs: number[], digits: number) => xs.map((x) => x.toFixed(digits)).join(' / ');
const loops = Array.from({ length: ROUNDS }, referenceLoop);
const faults = Array.from({ length: ROUNDS }, pageFault);
console.log(`Node ${process.version}`);
console.log(`  reference loop (3·10⁸ additions): ${fmt(loops, 0)} ms`);
console.log(`  a first-touched 4 KiB page beyond its fill: ${fmt(faults, 2)} µs (${MB} MiB a round)`);

const idleSpells = (process.env.BENCH_MACHINE_IDLE ?? '10,30').split(',').filter(Boolean).map(Number);
if (idleSpells.length > 0) {
  const kept = Buffer.alloc(MB * 2 ** 20, 1);
  touchAgain(kept);
  const figures = [`right away ${touchAgain(kept).us.toFixed(3)} µs`];
  for (const s of idleSpells) {
    await sleep(s * 1000);
    const t = touchAgain(kept);
    figures.push(`after ${s} s idle ${t.us.toFixed(3)} µs (${t.faults} page faults)`);
  }
  console.log(`  a kept page read again (${MB} MiB, a byte a page): ${figures.join('; ')}`);
}

const client = new pg.Client({
  connectionString:
    process.env.SLUICE_BENCH_PG_URL ??
    process.env.SLUICE_TEST_PG_URL ??
    'postgres://postgres@127.0.0.1:5432/postgres',
});
try {
  await client.connect();
  await roundTrips(client, 0, 200);
  const trips: string[] = [];
  for (const [gap, count] of [
    [0, 500],
    [10, 100],
    [200, 25],
  ]) {
    const rounds: number[] = [];
    for (let r = 0; r < ROUNDS; r++) rounds.push(await roundTrips(client, gap, count));
    trips.push(`${gap === 0 ? 'back to back' : `after ${gap} ms idle`} ${fmt(rounds, 0)}`);
  }
  console.log(`  a PostgreSQL round trip (select 1), p50 µs: ${trips.join('; ')}`);
} catch (err) {
  console.log(`  a PostgreSQL round trip: not measured (${(err as Error).message})`);
} finally {
  await client.end().catch(() => {});
}
