// Counts the statements this process sends through `pg` (every Client.query, pools included:
// the platform database, pg-boss and the connectors' data sessions alike), in total and per
// database. Loaded by latency.bench.ts in its own process and with `--import` into the workers it
// starts; with BENCH_STATS_DIR set, a process writes its counts to <dir>/<pid>.json every 200 ms
// and on exit, with its event-loop lag (how often a 10 ms timer came 20/50/100/250 ms late). With BENCH_STATEMENT_LOG=file, every counted statement is also appended to that
// file (pid, database, time, the session's backend pid, the statement's first 160 characters),
// and a line when its answer came: where a run's cost and its waits go.
// Commits are counted here too, per database, from what each connection sends: a statement
// outside `begin` … `commit` is a transaction of its own, a `begin` … `commit` block is one, a
// `rollback` none. Unlike pg_stat_database's xact_commit these are only this process's own
// sessions' (not autovacuum's, not the bench's polling).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const pg = require('pg');
const counts = {
  statements: 0,
  byDatabase: {},
  commitsByDatabase: {},
  lag: { samples: 0, over20: 0, over50: 0, over100: 0, over250: 0 },
  // The queue's fetches (jobs/queue-sql.ts, `with next as …`), those that took no job, its
  // polls for ready jobs, and the notifications this process heard (its wake-ups).
  queue: { fetches: 0, emptyFetches: 0, polls: 0, notifications: 0 },
};
const logFile = process.env.BENCH_STATEMENT_LOG;
// The monotonic clock beside the wall clock, once: V8 CPU profiles (--cpu-prof) stamp their
// samples on the monotonic clock, so a run's statements can be matched to its samples.
if (logFile) {
  const mono = Number(process.hrtime.bigint() / 1000n);
  const wall = performance.timeOrigin + performance.now();
  fs.appendFileSync(logFile, `${process.pid}\tclock\t${wall.toFixed(1)}\t${mono}\tmonotonic µs\n`);
}
const textOf = (arg) => (typeof arg === 'string' ? arg : (arg?.text ?? arg?.name ?? '?'));
/** Whether this statement, sent on `client`, ends a transaction that commits. */
const inTransaction = new WeakSet();
function committed(client, text) {
  const word = /^\s*(\w+)/.exec(text)?.[1]?.toLowerCase();
  if (word === 'begin' || (word === 'start' && /^\s*start\s+transaction/i.test(text))) {
    inTransaction.add(client);
    return false;
  }
  if (word === 'rollback' || word === 'abort') {
    // `rollback to savepoint` stays inside the transaction.
    if (!/^\s*rollback\s+to\b/i.test(text)) inTransaction.delete(client);
    return false;
  }
  if (word === 'commit' || word === 'end') return inTransaction.delete(client);
  return !inTransaction.has(client);
}
const handleNotification = pg.Client.prototype._handleNotification;
pg.Client.prototype._handleNotification = function countedNotification(...args) {
  if (this.connectionParameters?.application_name !== 'sluice-bench') counts.queue.notifications++;
  return handleNotification.apply(this, args);
};
/**
 * Counts a queue fetch, and whether it took nothing from its answer: through its callback
 * (wrapped here, before it is sent) or, without one, its promise (`then`, once sent).
 */
function countFetch(args) {
  counts.queue.fetches++;
  const empty = (res) => {
    if (res && Array.isArray(res.rows) && res.rows.length === 0) counts.queue.emptyFetches++;
  };
  const last = args.length - 1;
  if (typeof args[last] === 'function') {
    const callback = args[last];
    args[last] = function answered(err, res) {
      if (!err) empty(res);
      return callback.apply(this, [err, res]);
    };
    return () => {};
  }
  return (result) => {
    if (typeof result?.then === 'function') result.then(empty, () => {});
  };
}
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(...args) {
  const params = this.connectionParameters;
  // The bench's own queries (pipeline-support.ts `sql`) are not a run's cost.
  if (params?.application_name !== 'sluice-bench') {
    // Statements sent in one write (the PostgreSQL source's statements-at-once.ts) say what
    // they hold: each is counted and logged, in order, as if sent alone.
    const texts = Array.isArray(args[0]?.statements) ? args[0].statements : [textOf(args[0])];
    counts.statements += texts.length;
    const head = texts[0].trimStart().slice(0, 40);
    const fetched = head.startsWith('with next as') ? countFetch(args) : null;
    if (head.startsWith('select q.name from unnest')) counts.queue.polls++;
    const db = params?.database ?? '?';
    counts.byDatabase[db] = (counts.byDatabase[db] ?? 0) + texts.length;
    for (const text of texts)
      if (committed(this, text)) counts.commitsByDatabase[db] = (counts.commitsByDatabase[db] ?? 0) + 1;
    if (logFile) {
      const session = this.processID ?? '?';
      const stamp = () => (performance.timeOrigin + performance.now()).toFixed(1);
      for (const text of texts) {
        const line = text.replace(/\s+/g, ' ').trim().slice(0, 160);
        fs.appendFileSync(logFile, `${process.pid}\t${db}\t${stamp()}\t${session}\t${line}\n`);
      }
      // A statement's answer is logged too (promise, callback or a submitted query's own
      // callback): the time between an answer and the next statement is the worker's own
      // (JavaScript, timers), not the database's.
      const sent = performance.now();
      const done = () =>
        fs.appendFileSync(
          logFile,
          `${process.pid}\t${db}\t${stamp()}\t${session}\t  done (${(performance.now() - sent).toFixed(1)} ms)\n`,
        );
      const last = args.length - 1;
      if (typeof args[last] === 'function') {
        const callback = args[last];
        args[last] = function answered(...results) {
          done();
          return callback.apply(this, results);
        };
      } else if (typeof args[0]?.submit === 'function' && typeof args[0].callback === 'function') {
        const callback = args[0].callback;
        args[0].callback = function answered(...results) {
          done();
          return callback.apply(this, results);
        };
      }
      const result = query.apply(this, args);
      if (typeof result?.then === 'function') result.then(done, done);
      fetched?.(result);
      return result;
    }
    const result = query.apply(this, args);
    fetched?.(result);
    return result;
  }
  return query.apply(this, args);
};
globalThis.__benchStatements = counts;

// With BENCH_STATEMENT_LOG, every TCP connection this process opens (the port says to whom:
// the platform's and the target's PostgreSQL, MariaDB) and when it was established: a run's
// sessions opening, which no statement shows. MariaDB's first connect also marks the moment its
// driver and source module had loaded.
if (logFile) {
  const net = await import('node:net');
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function loggedConnect(...args) {
    // net.connect() hands its arguments on normalized, as one array.
    const a = Array.isArray(args[0]) ? args[0] : args;
    const o = typeof a[0] === 'object' && a[0] !== null ? a[0] : { port: a[0], host: a[1] };
    if (o.port !== undefined) {
      const stamp = () => (performance.timeOrigin + performance.now()).toFixed(1);
      const to = `${o.host ?? 'localhost'}:${o.port}`;
      fs.appendFileSync(logFile, `${process.pid}\tsocket\t${stamp()}\t-\tconnect ${to}\n`);
      this.once('connect', () =>
        fs.appendFileSync(logFile, `${process.pid}\tsocket\t${stamp()}\t-\t  connected ${to}\n`),
      );
    }
    return connect.apply(this, args);
  };
}

const dir = process.env.BENCH_STATS_DIR;
if (dir) {
  // Written only when a count moved (statements, commits, late loops): an idle worker between
  // two runs does not spend its CPU on the bench's bookkeeping, which a run would be billed.
  let written = -1;
  const write = (always) => {
    const moved = counts.statements + counts.lag.over20;
    if (moved === written && always !== true) return;
    written = moved;
    try {
      // Written aside and renamed: a reader never sees half a file (and drops no process).
      const file = path.join(dir, `${process.pid}.json`);
      fs.writeFileSync(`${file}.tmp`, JSON.stringify(counts));
      fs.renameSync(`${file}.tmp`, file);
    } catch {
      // the bench removed its directory
    }
  };
  setInterval(write, 200).unref();
  // Event-loop lag: a 10 ms timer's lateness, counted in cumulative buckets (the bench takes
  // their deltas per phase): a run waiting for this process's loop is a tail-latency cause.
  let due = performance.now() + 10;
  setInterval(() => {
    const late = performance.now() - due;
    due = performance.now() + 10;
    counts.lag.samples++;
    if (late >= 20) counts.lag.over20++;
    if (late >= 50) counts.lag.over50++;
    if (late >= 100) counts.lag.over100++;
    if (late >= 250) counts.lag.over250++;
  }, 10).unref();
  process.on('exit', () => write(true));
}
