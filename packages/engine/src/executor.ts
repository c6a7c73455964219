import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sparePipesIn } from './fifos';
import { Canceled, type Deferred, deferred, type MeteredPayload, meterPayload, raceAbort } from './meter';
import type { Payload } from './payloads';
import type { Plan } from './plan';
import type { LogLevel, Ports, RunObserver, StepContext, StepReport, StepState } from './ports';
import { classifyFailure, isRetryable, masker, RunError } from './run-error';
import type { PipelineSpec, Step } from './spec';
import { spoolPayload } from './spool';
import { bindTemplates, newStepTally, type StepTally, stepContext, stepResolver } from './step-context';
import { TemplateError } from './templates';
import { openTransform, preloadDuck } from './transform';
import type { Transforms } from './transform-remote';

export { RunError, type RunErrorCode } from './run-error';

export type ExecuteRunOptions = {
  runSlug: string;
  spec: PipelineSpec;
  plan: Plan;
  ports: Ports;
  /** Committed lower bounds per source step slug (null or missing: none yet). */
  cursors: Record<string, string | null>;
  /** Template scope: `{ runtime: { input, env, secrets, run_slug } }`. */
  scope: Record<string, unknown>;
  /** Every secret and run input value; masked out of logs, reports and errors. */
  secretValues: string[];
  signal: AbortSignal;
  observer: RunObserver;
  /** Receives lines already masked. */
  log(level: LogLevel, stepSlug: string | null, message: string): void;
  /**
   * A directory owned by this run (spools, DuckDB spill files), made (0700) if missing the first
   * time a step needs it: a run of a source into a sink never does. The caller removes it.
   */
  tmpDir: string;
  /**
   * A directory of this process that outlives its runs, on the file system of `tmpDir`:
   * transforms take their named pipes from the spares made there (fifos.ts). The caller
   * removes it; without it, each transform makes its own.
   */
  pipeDir?: string;
  /** DuckDB memory limit of one transform before it spills to tmpDir; default '256MB'. */
  transformMemoryLimit?: string;
  /** Records of a JSON array a transform detects its columns on; default DuckDB's 20,480. */
  transformJsonSample?: number;
  /**
   * Where transforms run: by default in this process's DuckDB; a transform host
   * (transform-remote.ts) runs them in its child process instead.
   */
  transforms?: Transforms;
  /**
   * Opening a source again after a failure its port marks `retryable` (a refused connection, a
   * timeout, a rate limit): attempts in all, and the wait before the second, doubled after
   * each. Nothing has flowed while a source opens, so another try cannot duplicate data.
   */
  sourceRetry?: { attempts: number; delayMs: number };
};

const defaultSourceRetry = { attempts: 3, delayMs: 1000 };

export type RunOutcome = {
  /** Next cursor of every source step; commit them only because every sink succeeded. */
  cursors: Record<string, string | null>;
};

/** What a step receives from one upstream step; `drain` when it is the upstream's own stream. */
type Input = { from: string; payload: Payload; drain: boolean };

type Node = StepTally & {
  step: Step;
  state: StepState;
  error?: { code: string; message: string };
  /** One per downstream step: resolved when the payload is ready for it. */
  outputs: Map<string, Deferred<Input>>;
  ctx: StepContext;
};

const PROGRESS_MS = 1000;

/**
 * Runs a planned pipeline: sources through `ports.readSource`, transforms in DuckDB, sinks
 * through `ports.writeSink`, each step as soon as its inputs are there. Resolves when every
 * step succeeded; otherwise rejects with a RunError whose message is masked. The first step to
 * fail is `failed`; steps it stopped are `canceled`; steps that never started are `skipped`
 * (all of them `canceled` when the run was canceled).
 */
export async function executeRun(opts: ExecuteRunOptions): Promise<RunOutcome> {
  const { plan, ports, runSlug } = opts;
  const mask = masker(opts.secretValues);
  const steps = new Map(opts.spec.steps.map((s) => [s.slug, s]));
  for (const slug of plan.order) {
    const s = steps.get(slug);
    if (!s) throw new RunError('INVALID_PLAN', `the plan names step ${slug}, which the spec does not have`);
    for (const d of plan.downstream[slug] ?? [])
      if (!steps.has(d)) throw new RunError('INVALID_PLAN', `step ${slug} feeds unknown step ${d}`);
  }
  // Looked at on first use: a run without spools or transforms waits for no file-system call.
  let madeTmp: Promise<string> | null = null;
  const tmpDir = () => {
    madeTmp ??= mkdir(opts.tmpDir, { recursive: true, mode: 0o700 }).then(() => opts.tmpDir);
    return madeTmp;
  };
  if (opts.spec.steps.some((s) => s.kind === 'transform')) {
    if (opts.transforms) opts.transforms.warm();
    else {
      preloadDuck();
      if (opts.pipeDir) sparePipesIn(opts.pipeDir);
    }
  }

  const run = new AbortController();
  const signal = run.signal;
  let canceled = false;
  let failure: RunError | null = null;
  const onCancel = () => {
    if (failure || signal.aborted) return;
    canceled = true;
    run.abort();
  };
  if (opts.signal.aborted) onCancel();
  else opts.signal.addEventListener('abort', onCancel, { once: true });

  const log = (level: LogLevel, slug: string | null, message: string) => opts.log(level, slug, mask(message));

  // Reports go out one at a time, in order; a failing observer does not stop the run, its
  // first error is rethrown at the end.
  let chain: Promise<void> = Promise.resolve();
  let observerError: unknown = null;
  const report = (n: Node) => {
    n.dirty = false;
    const r: StepReport = { step: n.step.slug, state: n.state, counters: { ...n.counters } };
    if (n.error) r.error = { ...n.error };
    chain = chain
      .then(() => opts.observer.onStep(r))
      .catch((err) => {
        observerError ??= err;
      });
  };

  const nodes = new Map<string, Node>();
  for (const slug of plan.order) {
    const step = steps.get(slug)!;
    const tally = newStepTally();
    const node: Node = Object.assign(tally, {
      step,
      state: 'pending' as StepState,
      outputs: new Map((plan.downstream[slug] ?? []).map((d) => [d, deferred<Input>()])),
      ctx: stepContext({
        runSlug,
        step,
        signal,
        scope: opts.scope,
        lowerBoundCursor: opts.cursors[slug] ?? null,
        state: tally,
        log: (level, message) => log(level, slug, message),
      }),
    });
    nodes.set(slug, node);
  }

  const settled = (n: Node) => n.state !== 'pending' && n.state !== 'running';
  const start = (n: Node) => {
    n.state = 'running';
    log('info', n.step.slug, `${n.step.kind} started`);
    report(n);
  };
  const succeed = (n: Node) => {
    if (settled(n)) return;
    n.state = 'succeeded';
    const c = n.counters;
    log(
      'info',
      n.step.slug,
      `succeeded: rows in ${c.rows_in}, out ${c.rows_out}; bytes in ${c.bytes_in}, out ${c.bytes_out}`,
    );
    report(n);
  };
  /** Settles a step that threw: the first failure of the run fails it, later ones cancel. */
  const fail = (n: Node, err: unknown) => {
    if (settled(n)) return;
    if (failure || canceled || err instanceof Canceled) {
      n.state = n.state === 'pending' ? (canceled ? 'canceled' : 'skipped') : 'canceled';
    } else {
      const f = classifyFailure(n.step.slug, err, n.templateError, mask);
      n.state = 'failed';
      n.error = f.step;
      failure = f.run;
      log('error', n.step.slug, `failed: ${f.step.message}`);
      run.abort();
    }
    report(n);
  };

  /** Hands a step's output to its consumers: directly to one, through a spool to several. */
  const distribute = async (n: Node, out: MeteredPayload) => {
    const consumers = [...n.outputs.entries()];
    if (consumers.length === 0) return out.finish(true);
    if (consumers.length === 1)
      return consumers[0][1].resolve({ from: n.step.slug, payload: out.payload, drain: true });
    const replay = await raceAbort(
      tmpDir().then((dir) => spoolPayload(out.payload, join(dir, `spool-${n.step.slug}`))),
      signal,
    );
    for (const [, d] of consumers) d.resolve({ from: n.step.slug, payload: replay(), drain: false });
  };

  const nextCursors: Record<string, string | null> = {};

  /** The source's output, opened again while it fails with a retryable error (docs/runs.md). */
  const openSource = async (n: Node) => {
    const { attempts, delayMs } = opts.sourceRetry ?? defaultSourceRetry;
    for (let attempt = 1; ; attempt++) {
      try {
        return await raceAbort(ports.readSource(n.ctx), signal);
      } catch (err) {
        if (attempt >= attempts || !isRetryable(err) || n.templateError) throw err;
        const wait = delayMs * 2 ** (attempt - 1);
        const { code, message } = classifyFailure(n.step.slug, err, null, mask).step;
        log('warn', n.step.slug, `${code}: ${message}; attempt ${attempt + 1} of ${attempts} in ${wait} ms`);
        await raceAbort(
          sleep(wait, undefined, { signal }).catch(() => {}),
          signal,
        );
      }
    }
  };

  const runSource = async (n: Node) => {
    let out: MeteredPayload | null = null;
    try {
      const source = await openSource(n);
      out = meterPayload(source.payload, {
        signal,
        rows: (k) => bump(n, 'rows_out', k),
        bytes: (k) => bump(n, 'bytes_out', k),
        onError: (err) => fail(n, err),
      });
      await distribute(n, out);
      await raceAbort(out.ended, signal);
      nextCursors[n.step.slug] = (await raceAbort(source.nextCursor(), signal)) ?? null;
      succeed(n);
    } catch (err) {
      fail(n, err);
      await out?.finish(false);
    }
  };

  const meterInput = (n: Node, input: Input) =>
    meterPayload(input.payload, {
      signal,
      rows: (k) => bump(n, 'rows_in', k),
      bytes: (k) => bump(n, 'bytes_in', k),
    });

  const runTransform = async (n: Node, inputs: Input[]) => {
    const op = n.step.operation;
    const metered = inputs.map((i) => meterInput(n, i));
    let out: MeteredPayload | null = null;
    let close: (() => Promise<void>) | null = null;
    try {
      if (op.operation_type !== 'sql' || !op.sql)
        throw new RunError('TRANSFORM_FAILED', `transform ${n.step.slug}: no SQL to run`, n.step.slug);
      const resolve = stepResolver(opts.scope, runSlug, null);
      let bound: ReturnType<typeof bindTemplates>;
      try {
        bound = bindTemplates(op.sql, resolve);
      } catch (err) {
        if (err instanceof TemplateError) n.templateError = err;
        throw err;
      }
      const t = await (opts.transforms?.open ?? openTransform)({
        slug: n.step.slug,
        sql: bound.sql,
        params: bound.params,
        inputs: inputs.map((input, i) => ({ slug: input.from, payload: metered[i].payload })),
        dir: await tmpDir(),
        signal,
        memoryLimit: opts.transformMemoryLimit,
        jsonSampleRecords: opts.transformJsonSample,
        log: (level, message) => log(level, n.step.slug, message),
      });
      close = t.close;
      out = meterPayload(t.payload, {
        signal,
        rows: (k) => bump(n, 'rows_out', k),
        bytes: (k) => bump(n, 'bytes_out', k),
        onError: (err) => fail(n, err),
      });
      await distribute(n, out);
      await raceAbort(out.ended, signal);
      // After the result: an input the query reads while it arrives is still being read until
      // then (duck-stream.ts); one it loaded whole has ended already.
      for (const [i, m] of metered.entries()) await m.finish(inputs[i].drain);
      succeed(n);
    } catch (err) {
      fail(n, err);
      await out?.finish(false);
      for (const m of metered) await m.finish(false);
    } finally {
      await close?.();
    }
  };

  const runSink = async (n: Node, inputs: Input[]) => {
    const metered: MeteredPayload[] = [];
    try {
      for (const input of inputs) {
        const m = meterInput(n, input);
        metered.push(m);
        const before = { rows: n.counters.rows_out, bytes: n.counters.bytes_out };
        const result = await raceAbort(ports.writeSink(m.payload, n.ctx), signal);
        // The port's own counting shows progress; its result is the final word.
        n.counters.rows_out = before.rows + (result?.rows ?? 0);
        n.counters.bytes_out = before.bytes + (result?.bytes ?? 0);
        await m.finish(input.drain);
      }
      succeed(n);
    } catch (err) {
      fail(n, err);
      for (const m of metered) await m.finish(false);
    }
  };

  const runStep = async (slug: string) => {
    const n = nodes.get(slug)!;
    let inputs: Input[] = [];
    try {
      const upstream = plan.upstream[slug] ?? [];
      inputs = await Promise.all(upstream.map((u) => nodes.get(u)!.outputs.get(slug)!.promise));
    } catch (err) {
      fail(n, err);
    }
    if (!settled(n) && signal.aborted) fail(n, new Canceled());
    if (!settled(n)) {
      start(n);
      if (n.step.kind === 'source') await runSource(n);
      else if (n.step.kind === 'transform') await runTransform(n, inputs);
      else await runSink(n, inputs);
    }
    // Consumers of a step that did not deliver learn it here and settle in turn.
    for (const d of n.outputs.values()) d.reject(new Canceled());
  };

  const bump = (n: Node, key: keyof Node['counters'], k: number) => {
    n.counters[key] += k;
    n.dirty = true;
  };

  const progress = setInterval(() => {
    for (const n of nodes.values()) if (n.state === 'running' && n.dirty) report(n);
  }, PROGRESS_MS);
  progress.unref();
  try {
    await Promise.all(plan.order.map(runStep));
  } finally {
    clearInterval(progress);
    opts.signal.removeEventListener('abort', onCancel);
    await chain;
  }
  if (failure) throw failure;
  if (canceled) throw new RunError('CANCELED', mask(cancelMessage(opts.signal.reason)));
  if (observerError) throw observerError;
  return { cursors: nextCursors };
}

/** The caller's abort reason when it says something (a string, an Error other than AbortError). */
function cancelMessage(reason: unknown): string {
  if (typeof reason === 'string' && reason.length > 0) return reason;
  if (reason instanceof Error && reason.name !== 'AbortError' && reason.message) return reason.message;
  return 'the run was canceled';
}
