import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ExecuteRunOptions, executeRun, type RunError } from './executor';
import { stopSparePipes } from './fifos';
import type { Payload, SinkResult, SourceOutput } from './payloads';
import { planSpec } from './plan';
import type { Ports, StepContext, StepReport } from './ports';
import { pipelineSpecSchema } from './spec';
import { type TransformHost, transformHost } from './transform-remote';

// Ports over in-memory generators and arrays for the executor's tests: the boundary the
// worker fills with connectors. Used by *.test.ts only.

export type SourceFn = (ctx: StepContext) => SourceOutput | Promise<SourceOutput>;
export type SinkFn = (input: Payload, ctx: StepContext) => Promise<SinkResult>;

export function memoryPorts(sources: Record<string, SourceFn>, sinks: Record<string, SinkFn>): Ports {
  return {
    readSource: async (ctx) => {
      const f = sources[ctx.step.slug];
      if (!f) throw new Error(`no test source for ${ctx.step.slug}`);
      return f(ctx);
    },
    writeSink: async (input, ctx) => {
      const f = sinks[ctx.step.slug];
      if (!f) throw new Error(`no test sink for ${ctx.step.slug}`);
      return f(input, ctx);
    },
  };
}

export const source = (slug: string, extra: Record<string, unknown> = {}) => ({
  slug,
  kind: 'source',
  data_source_ref: 'api',
  operation: { operation_type: 'http', path: `/${slug}`, ...extra },
});
export const transform = (slug: string, sql: string) => ({
  slug,
  kind: 'transform',
  operation: { operation_type: 'sql', sql },
});
export const sink = (slug: string) => ({
  slug,
  kind: 'sink',
  data_source_ref: 'out',
  operation: { operation_type: 'http', method: 'POST', path: `/${slug}`, body: '{{input}}' },
});
export const edges = (...pairs: [string, string][]) => pairs.map(([from, to]) => ({ from, to }));

/** A source output over fixed batches, with a cursor known once they were all read. */
export function rowsSource(columns: string[], batches: Iterable<unknown[][]>, cursor: string | null = null) {
  return (): SourceOutput => {
    let read = false;
    return {
      payload: {
        kind: 'rows',
        columns: columns.map((c) => ({ name: c.split(':')[0], type: c.split(':')[1] ?? 'text' })),
        batches: (async function* () {
          yield* batches;
          read = true;
        })(),
      },
      nextCursor: async () => (read ? cursor : null),
    };
  };
}

/** A sink that reads rows (or JSON records) and keeps them. */
export function collectSink(into: unknown[][], columns?: { names: string[] }): SinkFn {
  return async (input) => {
    if (input.kind !== 'rows' && input.kind !== 'json') throw new Error(`unexpected ${input.kind}`);
    if (input.kind === 'rows' && columns) columns.names = input.columns.map((c) => c.name);
    let n = 0;
    for await (const b of input.batches) {
      into.push(...(b as unknown[][]));
      n += b.length;
    }
    return { rows: n, bytes: 0 };
  };
}

export type Harness = {
  reports: StepReport[];
  logs: { level: string; step: string | null; message: string }[];
  final(step: string): StepReport | undefined;
  run(overrides?: Partial<ExecuteRunOptions>): ReturnType<typeof executeRun>;
  tmpDir: string;
  cleanup(): Promise<void>;
};

export async function harness(spec: unknown, ports: Ports): Promise<Harness> {
  const parsed = pipelineSpecSchema.parse(spec);
  const { plan, findings } = planSpec(parsed);
  if (!plan) throw new Error(`test spec has errors: ${JSON.stringify(findings)}`);
  const tmpDir = await mkdtemp(join(tmpdir(), 'sluice-engine-'));
  const reports: StepReport[] = [];
  const logs: Harness['logs'] = [];
  return {
    reports,
    logs,
    tmpDir,
    final: (step) => reports.filter((r) => r.step === step).at(-1),
    run: (overrides = {}) =>
      executeRun({
        runSlug: 'run-abc',
        spec: parsed,
        plan,
        ports,
        cursors: {},
        scope: { runtime: { input: {}, env: {}, secrets: {}, run_slug: 'run-abc' } },
        secretValues: [],
        signal: new AbortController().signal,
        observer: { onStep: (r) => void reports.push(r) },
        log: (level, step, message) => void logs.push({ level, step, message }),
        tmpDir: join(tmpDir, 'run'),
        // Transforms take their named pipes from spares, as in a worker (fifos.ts).
        pipeDir: join(tmpDir, 'pipes'),
        ...overrides,
      }),
    // The spares' restock (500 ms after a transform closed) must not make pipes in the
    // directory while it is removed (ENOTEMPTY).
    cleanup: async () => {
      await stopSparePipes();
      await rm(tmpDir, { recursive: true, force: true });
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The error a run rejected with (fails the test when it resolved). */
export const rejection = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    return err as RunError;
  }
  throw new Error('the run resolved');
};

/** A transform host whose child runs test-transform-host.ts with tsx (`sluice transform-host` in serve). */
export function testTransformHost(idleMs?: number): TransformHost {
  const entry = fileURLToPath(new URL('./test-transform-host.ts', import.meta.url));
  return transformHost(
    () =>
      fork(entry, [], {
        execArgv: ['--import', 'tsx'],
        serialization: 'advanced',
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      }),
    idleMs,
  );
}
