// What the benches read of processes from /proc (same host): CPU seconds of a process, CPU
// sampled by group while a run works (with the bound two cores put on a copy), and a process's
// resident memory.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The fields of a /proc stat file after the command name: [7] minor faults, [11] user and [12] system ticks. */
function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** User + system CPU seconds in the text of a /proc stat file (a process's or a thread's). */
export function statSeconds(stat: string): number {
  const f = statFields(stat);
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** Minor page faults and system CPU seconds of a process so far (every thread): memory touched for the first time. */
export function faultsAndSystem(pid: number): { faults: number; systemS: number } {
  const f = statFields(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  return { faults: Number(f[7]), systemS: Number(f[12]) / 100 };
}

/** CPU seconds (user + system, every thread) a process used so far. */
export function cpuSeconds(pid: number): number {
  return statSeconds(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/**
 * A process's context switches so far: `waits` (voluntary: it blocked on input, a lock, its WAL
 * written) and `preempted` (the scheduler gave its core to another process).
 */
export function contextSwitches(pid: number): { waits: number; preempted: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { waits: field('voluntary_ctxt_switches'), preempted: field('nonvoluntary_ctxt_switches') };
}

/**
 * CPU ms of a PostgreSQL cluster started from data directory `<dir>/data` (test/peers/postgres-cluster.ts):
 * its postmaster and every child of it (backends, WAL sender and receiver, startup process, writers).
 */
export function clusterCpuMs(dir: string): number {
  const pm = Number(fs.readFileSync(path.join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  let ms = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(statFields(stat)[1]);
      if (Number(entry) === pm || ppid === pm) ms += statSeconds(stat) * 1000;
    } catch {
      // ended meanwhile
    }
  }
  return ms;
}

/** The processes a run's CPU is read from: its worker, and others by their command line. */
export type CpuGroups = Record<string, (cmdline: string) => boolean>;

/** PostgreSQL backends of `database` (their process title names it), not the bench's own. */
export const backendsOf = (database: string) => (cmd: string) =>
  cmd.startsWith('postgres: ') && cmd.includes(` ${database} `);

/** The server's own processes that work for every session: WAL writer, checkpointer, bgwriter. */
export const pgServerProcesses = (cmd: string) =>
  /^postgres: .*(walwriter|checkpointer|background writer)/.test(cmd);

/**
 * CPU seconds of each group of processes, sampled every `everyMs` from now on (the process
 * list re-read at each sample, so backends that connect later are found): totals, and a
 * timeline of per-bucket CPU (BENCH_TIMELINE), from which a run's first and last busy bucket
 * of the target show when its bytes started and stopped (issue 26 item 8's fixed costs).
 */
export function sampleCpu(groups: CpuGroups, pids: Record<string, number> = {}, everyMs = 25) {
  const names = [...Object.keys(pids), ...Object.keys(groups)];
  /** pid → group, and the CPU it had when first seen (a backend's connection setup counts). */
  const members = new Map<number, { group: string; last: number }>(
    Object.entries(pids).map(([group, pid]) => [pid, { group, last: cpuSeconds(pid) }]),
  );
  /**
   * Processes that belong to no group: anything whose title is set and matches none, and any
   * other process still unmatched a second after it was first seen (the postmaster, say).
   */
  const others = new Set<number>();
  const unsure = new Map<number, number>();
  const scan = (initial: boolean) => {
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const pid = Number(entry);
      if (members.has(pid) || others.has(pid)) continue;
      let cmd: string;
      try {
        cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      } catch {
        continue;
      }
      const group = Object.keys(groups).find((g) => groups[g](cmd));
      if (!group) {
        // A new PostgreSQL backend has the postmaster's command line until it sets its title.
        const first = unsure.get(pid) ?? performance.now();
        unsure.set(pid, first);
        if (!cmd.includes('postgres') || cmd.startsWith('postgres: ') || performance.now() - first > 1000) {
          others.add(pid);
          unsure.delete(pid);
        }
        continue;
      }
      try {
        // Found at the start: counted from now; found later: its whole life is this run's.
        members.set(pid, { group, last: initial ? cpuSeconds(pid) : 0 });
      } catch {}
    }
  };
  scan(true);
  const t0 = performance.now();
  const buckets: { at: number; cpu: Record<string, number> }[] = [];
  const totals: Record<string, number> = Object.fromEntries(names.map((g) => [g, 0]));
  const sample = () => {
    scan(false);
    const cpu: Record<string, number> = Object.fromEntries(names.map((g) => [g, 0]));
    for (const [pid, m] of members) {
      let now: number;
      try {
        now = cpuSeconds(pid);
      } catch {
        members.delete(pid); // ended; its last slice is lost (< one sample)
        continue;
      }
      cpu[m.group] += now - m.last;
      totals[m.group] += now - m.last;
      m.last = now;
    }
    buckets.push({ at: performance.now() - t0, cpu });
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { totals, buckets };
    },
  };
}

/** The sampled CPU as lines: totals, and (with `timelineMs`) one line per that many ms. */
export function cpuReport(r: ReturnType<ReturnType<typeof sampleCpu>['stop']>, timelineMs: number): string[] {
  const names = Object.keys(r.totals);
  const lines = [`CPU: ${names.map((g) => `${g} ${r.totals[g].toFixed(2)} s`).join(', ')}`];
  // The first and last sample in which the target's backends were busy (> 5 ms).
  const busy = r.buckets.filter((b) => (b.cpu.target ?? 0) > 0.005);
  const every = r.buckets.length > 1 ? r.buckets[1].at - r.buckets[0].at : 0;
  if (busy.length > 0)
    lines.push(
      `target busy from ${busy[0].at.toFixed(0)} ms to ${busy[busy.length - 1].at.toFixed(0)} ms after execute (~${every.toFixed(0)} ms samples)`,
    );
  if (timelineMs > 0) {
    const per = Math.max(1, Math.round(timelineMs / Math.max(every, 1)));
    lines.push(`timeline (ms: CPU ms per group in ${timelineMs} ms): ${names.join(' / ')}`);
    for (let i = 0; i < r.buckets.length; i += per) {
      const slice = r.buckets.slice(i, i + per);
      const sum = names.map((g) => (slice.reduce((a, b) => a + b.cpu[g], 0) * 1000).toFixed(0).padStart(4));
      lines.push(`  ${slice[0].at.toFixed(0).padStart(5)} ${sum.join(' ')}`);
    }
  }
  return lines;
}

/**
 * What two (or `cores`) cores allow at best, from a run's CPU: the target's backend is one
 * process, so the run is at least its CPU long, and at least the CPU of every group together
 * spread over the cores; against the limit's seconds, the best ratio those leave.
 */
export function coreBound(
  cpu: Record<string, number>,
  limitSeconds: number,
  cores = os.cpus().length,
): string {
  const all = Object.values(cpu).reduce((a, b) => a + b, 0);
  const bound = Math.max(cpu.target ?? 0, all / cores);
  return (
    `on ${cores} cores the copy takes at least max(target ${(cpu.target ?? 0).toFixed(2)} s, ` +
    `all ${all.toFixed(2)} s / ${cores}) = ${bound.toFixed(2)} s: at best ${(limitSeconds / bound).toFixed(2)} of the limit`
  );
}

/** CPU seconds of each live thread of a process, by thread id, with the thread's name. */
export function threadCpu(pid: number): Map<number, { name: string; s: number }> {
  const out = new Map<number, { name: string; s: number }>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      out.set(Number(tid), { name, s: statSeconds(stat) });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/**
 * Where a process's CPU went between two `threadCpu` readings, by thread name (the main thread
 * apart), e.g. "main 0.42 s, node 0.20 s (4), ended threads 0.05 s": in a Node 20 worker, V8's
 * and libuv's threads and DuckDB's all go by `node`. `total` is the process's own figure over the
 * same span, so what it holds beyond the live threads' is what threads that ended spent.
 */
export function threadReport(
  pid: number,
  before: Map<number, { name: string; s: number }>,
  after: Map<number, { name: string; s: number }>,
  total: number,
): string {
  const groups = new Map<string, { s: number; n: number }>();
  let seen = 0;
  for (const [tid, t] of after) {
    const s = t.s - (before.get(tid)?.s ?? 0);
    if (s <= 0) continue;
    seen += s;
    const key = tid === pid ? 'main' : t.name;
    const g = groups.get(key) ?? { s: 0, n: 0 };
    g.s += s;
    g.n += 1;
    groups.set(key, g);
  }
  const parts = [...groups]
    .sort((a, b) => b[1].s - a[1].s)
    .map(([name, g]) => `${name} ${g.s.toFixed(2)} s${g.n > 1 ? ` (${g.n})` : ''}`);
  if (total - seen >= 0.01) parts.push(`ended threads ${(total - seen).toFixed(2)} s`);
  return parts.join(', ');
}
