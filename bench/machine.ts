// `npm run bench:machine`: two figures of the machine itself, to tell machines apart before
// comparing the other benches across them (docs/benchmarks.md). Not a test: it prints figures.
//
// - The reference loop: 3·10⁸ additions in one JavaScript loop (the CPU and the JIT, nothing
//   else), the figure each section of docs/benchmarks.md gives for its machine.
// - A first-touched page: filling fresh memory costs the fill plus one page fault per 4 KiB
//   page; filling it again costs the fill alone. The difference over the pages is what a worker
//   pays each time it uses memory that was given back to the system (a few µs on most hosts;
//   far more under some hypervisors).
//
//   BENCH_MACHINE_ROUNDS=3   rounds of each figure
//   BENCH_MACHINE_MB=256     size of the fresh memory filled in each round

import { execFileSync } from 'node:child_process';

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

const fmt = (xs: number[], digits: number) => xs.map((x) => x.toFixed(digits)).join(' / ');
const loops = Array.from({ length: ROUNDS }, referenceLoop);
const faults = Array.from({ length: ROUNDS }, pageFault);
console.log(`Node ${process.version}`);
console.log(`  reference loop (3·10⁸ additions): ${fmt(loops, 0)} ms`);
console.log(`  a first-touched 4 KiB page beyond its fill: ${fmt(faults, 2)} µs (${MB} MiB a round)`);
