import type { LogLevel, RunObserver, SinkResult, StepReport } from '@sluice/engine';
import type { Deps } from '../context';
import { insertLogs, type LogLine, type StepUpdate, updateSteps } from '../modules/runs/index';

// Writes what a running attempt reports: step progress at most once a second per step, state
// changes within STATE_WRITE_DELAY_MS (gathered: the steps of a short run change state several
// times within a few milliseconds), log lines in batches. One write is in flight at a time and
// carries every step changed meanwhile, so writes land in the order they were reported and a
// burst of changes costs one statement. What is still unwritten when the attempt ends goes into
// the run's final transaction (`settle`), so the final state is always written, with the end.

const STEP_WRITE_INTERVAL_MS = 1000;
const STATE_WRITE_DELAY_MS = 250;
const LOG_FLUSH_INTERVAL_MS = 500;
/** Lines one attempt may keep; a chatty source must not fill the store. */
const MAX_LOG_LINES = 10_000;

type StepEntry = {
  report: StepReport;
  startedAt?: Date;
  finishedAt?: Date;
  lastWrite: number;
  lastState: string | null;
  timer: NodeJS.Timeout | null;
};

const terminal = new Set(['succeeded', 'failed', 'canceled', 'skipped']);

export type RunRecorder = {
  observer: RunObserver;
  log(level: LogLevel, stepSlug: string | null, message: string): void;
  /**
   * A sink step whose rows an earlier attempt already committed: its rows_out/bytes_out never
   * read lower than that from now on (written at once).
   */
  committed(stepSlug: string, result: SinkResult): void;
  /**
   * Stops writing and hands back what is still unwritten, for the run's final transaction
   * (see `writeProgress`); call once, when the attempt has ended.
   */
  settle(): Promise<PendingProgress>;
};

export type PendingProgress = { steps: (StepUpdate & { stepSlug: string })[]; logs: LogLine[] };

export function createRunRecorder(deps: Deps, runId: string, owner: string): RunRecorder {
  const steps = new Map<string, StepEntry>();
  const floors = new Map<string, SinkResult>();
  const dirty = new Set<string>();
  let settled = false;
  let chain: Promise<void> = Promise.resolve();
  const enqueueWrite = (write: () => Promise<void>) => {
    chain = chain.then(write).catch((err) => {
      deps.log.warn({ errCode: (err as { code?: string }).code, runId }, 'run progress write failed');
    });
    return chain;
  };

  const snapshot = (slug: string): StepUpdate & { stepSlug: string } => {
    const e = steps.get(slug)!;
    const { report } = e;
    const floor = floors.get(slug) ?? { rows: 0, bytes: 0 };
    return {
      stepSlug: slug,
      state: report.state,
      rowsIn: report.counters.rows_in,
      rowsOut: Math.max(report.counters.rows_out, floor.rows),
      bytesIn: report.counters.bytes_in,
      bytesOut: Math.max(report.counters.bytes_out, floor.bytes),
      error: report.error ?? null,
      startedAt: e.startedAt,
      finishedAt: e.finishedAt,
    };
  };
  const takeDirty = () => {
    const updates = [...dirty].map(snapshot);
    dirty.clear();
    for (const u of updates) steps.get(u.stepSlug)!.lastWrite = Date.now();
    return updates;
  };

  // Steps whose state changed, written together when the state timer fires.
  const soon = new Set<string>();
  let stateTimer: NodeJS.Timeout | null = null;
  let writing = false;
  const writeStep = (slug: string) => {
    if (settled) return;
    dirty.add(slug);
    // The write in flight picks this step up when it is done (the latest values, once).
    if (writing) return;
    writing = true;
    void enqueueWrite(async () => {
      try {
        while (dirty.size > 0 && !settled) await updateSteps(deps.db, runId, owner, takeDirty());
      } finally {
        writing = false;
      }
    });
  };

  const observer: RunObserver = {
    onStep(report) {
      const now = new Date();
      const e = steps.get(report.step) ?? {
        report,
        lastWrite: 0,
        lastState: null,
        timer: null,
      };
      e.report = report;
      if (report.state !== 'pending' && report.state !== 'skipped') e.startedAt ??= now;
      if (terminal.has(report.state)) e.finishedAt ??= now;
      steps.set(report.step, e);
      const changed = e.lastState !== report.state;
      e.lastState = report.state;
      if (changed) {
        if (e.timer) clearTimeout(e.timer);
        e.timer = null;
        soon.add(report.step);
        stateTimer ??= setTimeout(() => {
          stateTimer = null;
          for (const slug of soon) writeStep(slug);
          soon.clear();
        }, STATE_WRITE_DELAY_MS);
      } else if (soon.has(report.step)) {
        // Its state change is about to be written, with these counters.
      } else if (Date.now() - e.lastWrite >= STEP_WRITE_INTERVAL_MS) {
        if (e.timer) clearTimeout(e.timer);
        e.timer = null;
        writeStep(report.step);
      } else if (!e.timer) {
        // Counters keep moving: the latest values land within the interval.
        e.timer = setTimeout(
          () => {
            e.timer = null;
            writeStep(report.step);
          },
          STEP_WRITE_INTERVAL_MS - (Date.now() - e.lastWrite),
        );
      }
    },
  };

  let pending: LogLine[] = [];
  let kept = 0;
  let logTimer: NodeJS.Timeout | null = null;
  const flushLogs = () => {
    if (logTimer) clearTimeout(logTimer);
    logTimer = null;
    if (settled) return;
    const lines = pending;
    pending = [];
    void enqueueWrite(() => insertLogs(deps.db, runId, lines));
  };

  return {
    observer,
    committed(stepSlug, result) {
      floors.set(stepSlug, result);
      observer.onStep({
        step: stepSlug,
        state: 'pending',
        counters: { rows_in: 0, rows_out: result.rows, bytes_in: 0, bytes_out: result.bytes },
      });
      // Not delayed: should this attempt be lost too, the rows stay reported.
      soon.delete(stepSlug);
      writeStep(stepSlug);
    },
    log(level, stepSlug, message) {
      if (kept > MAX_LOG_LINES) return;
      kept++;
      pending.push(
        kept > MAX_LOG_LINES
          ? {
              stepSlug: null,
              level: 'warn',
              message: `log limit of ${MAX_LOG_LINES} lines reached`,
              at: new Date(),
            }
          : { stepSlug, level, message, at: new Date() },
      );
      if (settled) return;
      if (pending.length >= 200) flushLogs();
      else logTimer ??= setTimeout(flushLogs, LOG_FLUSH_INTERVAL_MS);
    },
    async settle() {
      settled = true;
      if (logTimer) clearTimeout(logTimer);
      logTimer = null;
      for (const e of steps.values()) {
        if (e.timer) clearTimeout(e.timer);
        e.timer = null;
      }
      if (stateTimer) clearTimeout(stateTimer);
      stateTimer = null;
      soon.clear();
      // The write in flight lands first (it stops after its statement); the rest is handed back.
      await chain;
      // Every step's final values: those written meanwhile are written again, harmlessly.
      const left = { steps: [...steps.keys()].map(snapshot), logs: pending };
      pending = [];
      dirty.clear();
      return left;
    },
  };
}
