// A lane of `npm test` that prints nothing for SLUICE_TEST_STALL_MINUTES (10) is stalled: every
// test and hook has a timeout, so only a process whose event loop is stuck (or a vitest waiting on
// one) stays silent that long. The watchdog then prints where the lane stands: the test files in
// flight and their current test (test/support/in-flight-reporter.ts), the lane's processes with
// what each waits on in the kernel and its CPU time, each Node process's native stack (gdb, when
// the machine has it), and the store sessions left inside a transaction or on a statement; then it
// stops the lane, which fails (docs/architecture.md "Tests").
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);
const STALL_MS = Number(process.env.SLUICE_TEST_STALL_MINUTES || 10) * 60_000;
const CHECK_MS = 15_000;

/** pid → { ppid, line } of every process, from ps. */
async function processTable() {
  const { stdout } = await run('ps', ['-eo', 'pid=,ppid=,stat=,wchan:28=,etime=,time=,args='], {
    maxBuffer: 16 * 1024 * 1024,
  });
  const table = new Map();
  for (const line of stdout.split('\n')) {
    const m = line.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/);
    if (m) table.set(Number(m[1]), { ppid: Number(m[2]), line: line.trim().slice(0, 220) });
  }
  return table;
}

function descendants(table, root) {
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, p] of table) if (p.ppid === out[i]) out.push(pid);
  return out.filter((pid) => table.has(pid));
}

async function nativeStack(pid) {
  try {
    const { stdout } = await run('gdb', ['-p', String(pid), '-batch', '-ex', 'thread apply 1 bt 25'], {
      timeout: 30_000,
      maxBuffer: 4 * 1024 * 1024,
    });
    return stdout
      .split('\n')
      .filter((l) => /^#\d+/.test(l))
      .map((l) => l.replace(/\s+/g, ' ').slice(0, 200));
  } catch (err) {
    return [
      `(no stack: ${err.code === 'ENOENT' ? 'gdb is not installed' : String(err.message).split('\n')[0]})`,
    ];
  }
}

async function storeSessions() {
  const { default: pg } = await import('pg');
  const client = new pg.Client({
    connectionString: process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    connectionTimeoutMillis: 5_000,
  });
  try {
    await client.connect();
    const { rows } = await client.query(
      `select pid, datname, client_port, state, wait_event_type, wait_event,
              extract(epoch from now() - state_change)::int as seconds, left(query, 160) as query
         from pg_stat_activity
        where datname like 'sluice%' and state <> 'idle' and pid <> pg_backend_pid()
        order by state_change`,
    );
    return rows.map(
      (r) =>
        `${r.pid} ${r.datname} port ${r.client_port} ${r.state} ${r.seconds} s` +
        `${r.wait_event ? ` waits ${r.wait_event_type}/${r.wait_event}` : ''}: ${r.query.replace(/\s+/g, ' ')}`,
    );
  } catch (err) {
    return [`(the store's sessions could not be read: ${err.message})`];
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Watches one lane: `seen()` on each line it prints. On a stall, `report` gets the diagnostics
 * line by line, and the lane's processes are killed.
 */
export function watchLane({ child, inFlightFile, report }) {
  let last = Date.now();
  let stalled = false;
  const timer = setInterval(async () => {
    if (stalled || Date.now() - last < STALL_MS) return;
    stalled = true;
    clearInterval(timer);
    const minutes = Math.round((Date.now() - last) / 60_000);
    report(`STALLED: no output for ${minutes} min; where the lane stands:`);
    try {
      const inFlight = JSON.parse(fs.readFileSync(inFlightFile, 'utf8'));
      for (const [file, e] of Object.entries(inFlight))
        report(
          `  in flight: ${e.project} ${file} since ${e.startedAt}; test: ${e.test ?? '-'} since ${e.testStartedAt ?? '-'}`,
        );
    } catch {
      report('  in flight: (not recorded)');
    }
    const table = await processTable().catch(() => new Map());
    const pids = descendants(table, child.pid);
    report('  processes (pid ppid stat wchan elapsed cpu args):');
    for (const pid of pids) report(`    ${table.get(pid).line}`);
    for (const pid of pids.filter((p) => /\bnode\b|sluice/.test(table.get(p).line)).slice(0, 12)) {
      report(`  native stack of ${pid}, its main thread:`);
      for (const line of await nativeStack(pid)) report(`    ${line}`);
    }
    report('  store sessions not idle:');
    for (const line of await storeSessions()) report(`    ${line}`);
    report('  stopping the lane');
    for (const pid of pids.reverse()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
  }, CHECK_MS);
  timer.unref();
  child.on('close', () => clearInterval(timer));
  return {
    seen() {
      last = Date.now();
    },
    get stalled() {
      return stalled;
    },
  };
}
