// `npm test`: every project of vitest.config.ts, in lanes that run side by side.
//
// Vitest with `isolate: false` runs one project's files and waits until the last of them has
// finished before it starts the next project, so each project ends with one worker idle beside
// its longest last file, four times a run. Each lane here is its own vitest process over some of
// the projects, so while one lane finishes a project the other keeps the cores busy; most suites
// wait on real servers rather than the CPU (docs/architecture.md "Tests").
//
// The suites' scratch files (embedded stores copied from the template, git repositories, FTP roots,
// a run's pipes and DuckDB's files) go to a directory of their own in RAM (/dev/shm) when the
// machine has one with room and TMPDIR is not set: on an ext4 disk, creating and deleting them
// was much of the kernel's share of the run's CPU, a fifth of it (docs/architecture.md "Tests").
// It is removed at the end.
//
// With arguments (`npm test -- path/to/file.test.ts`, `--project unit`, …) it is plain
// `vitest run` with them. SLUICE_TEST_LANES overrides the lanes: projects joined by `,`, lanes
// by `;`. Each lane prints its lines with its name in front and a summary at the end; the
// command fails when any lane fails.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { watchLane } from './stall-watch.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const vitest = path.join(root, 'node_modules/vitest/vitest.mjs');

// Balanced by the CPU each project spends (measured per file): the embedded store's suites run
// PostgreSQL as WebAssembly inside the test process, the browser suites drive Chromium. The CLI
// suites (`cli`) go with the embedded store's: beside `api-postgres` that lane took 700 s where the
// other took 550 s (docs/benchmarks.md).
const DEFAULT_LANES = 'unit,api-postgres;api-pglite,cli,browser';
// How many lines of a failing lane's failures block the summary repeats.
const FAILURE_LINES = 60;

// The most the suites held there at once was ~290 MB; a smaller /dev/shm (a container's default
// is 64 MB) leaves them on the disk.
const SCRATCH_FREE_BYTES = 2 * 1024 ** 3;

/** A scratch directory in RAM for the suites, or null (TMPDIR set, or no roomy /dev/shm). */
function scratchInRam() {
  if (process.env.TMPDIR || process.platform !== 'linux') return null;
  try {
    const fsStats = fs.statfsSync('/dev/shm');
    if (fsStats.bavail * fsStats.bsize < SCRATCH_FREE_BYTES) return null;
    const dir = fs.mkdtempSync('/dev/shm/sluice-test-');
    // Like /tmp: suites hand folders to other users (PostgreSQL's initdb runs as postgres).
    fs.chmodSync(dir, 0o1777);
    return dir;
  } catch {
    return null;
  }
}
const scratch = scratchInRam();
const scratchEnv = scratch ? { TMPDIR: scratch } : {};
const removeScratch = () => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
};

function run(args, env, prefix) {
  return new Promise((resolve) => {
    // A lane's test files in flight (test/support/in-flight-reporter.ts), for its stall watchdog.
    const inFlightFile = prefix
      ? path.join(scratch ?? os.tmpdir(), `sluice-in-flight-${process.pid}-${env.SLUICE_TEST_LANE}.json`)
      : null;
    const child = spawn(process.execPath, [vitest, 'run', ...args], {
      cwd: root,
      env: {
        ...process.env,
        ...scratchEnv,
        ...env,
        ...(inFlightFile ? { SLUICE_TEST_IN_FLIGHT: inFlightFile } : {}),
      },
      stdio: prefix ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    });
    const tail = [];
    // The failures block vitest prints near the end (names, first lines of each error), so
    // the summary after all lanes says what failed without scrolling up through the other lane.
    const failures = [];
    let inFailures = false;
    const watch = prefix
      ? watchLane({ child, inFlightFile, report: (line) => process.stdout.write(`${prefix} ${line}\n`) })
      : null;
    if (prefix) {
      for (const [stream, out] of [
        [child.stdout, process.stdout],
        [child.stderr, process.stderr],
      ]) {
        readline
          .createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY })
          .on('line', (line) => {
            out.write(`${prefix} ${line}\n`);
            watch.seen();
            // The closing lines of the lane (files, tests, duration) for the summary.
            const plain = stripVTControlCharacters(line).trim();
            if (/^(Test Files|Tests|Errors|Duration)\b/.test(plain)) tail.push(plain);
            if (/⎯{3,} (Failed Tests|Failed Suites|Unhandled Errors?)\b/.test(plain)) inFailures = true;
            else if (/^Test Files\b/.test(plain)) inFailures = false;
            if (inFailures && plain && failures.length < FAILURE_LINES) failures.push(plain);
          });
      }
    }
    for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => child.kill(signal));
    child.on('close', (code, signal) => {
      if (inFlightFile) fs.rmSync(inFlightFile, { force: true });
      if (watch?.stalled) failures.push('the lane stalled: see its STALLED report above');
      resolve({ code: watch?.stalled ? 1 : (code ?? (signal ? 1 : 0)), tail, failures });
    });
  });
}

const args = process.argv.slice(2);
if (args.length > 0) {
  const { code } = await run(args, {}, null);
  removeScratch();
  process.exit(code);
}

const started = Date.now();
const lanes = (process.env.SLUICE_TEST_LANES || DEFAULT_LANES)
  .split(';')
  .map((lane) =>
    lane
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean),
  )
  .filter((lane) => lane.length > 0);
const width = Math.max(...lanes.map((l) => l.join('+').length));
const results = await Promise.all(
  lanes.map((projects, i) =>
    run(
      projects.flatMap((p) => ['--project', p]),
      // Each lane keeps its own vitest cache (file durations, for scripts/test-durations.mjs).
      { SLUICE_TEST_LANE: String(i + 1) },
      `[${projects.join('+').padEnd(width)}]`,
    ),
  ),
);
process.stdout.write('\n');
lanes.forEach((projects, i) => {
  const { code, tail, failures } = results[i];
  process.stdout.write(`${projects.join(' + ')}: ${code === 0 ? 'passed' : `FAILED (exit ${code})`}\n`);
  for (const line of tail) process.stdout.write(`  ${line}\n`);
  if (code !== 0) for (const line of failures) process.stdout.write(`  | ${line}\n`);
});
process.stdout.write(`all lanes: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
removeScratch();
process.exit(results.every((r) => r.code === 0) ? 0 : 1);
