import {
  type Counters,
  type LogLevel,
  type Payload,
  renderValue,
  type Step,
  type StepContext,
  scopeResolver,
  stepSchema,
} from '@sluice/engine';

// A step context as the executor hands it to a connector, built from the engine's own
// template rendering: the boundary between engine and connectors, not a stand-in for either.

export type TestStep = StepContext & {
  counters: Counters;
  lines: { level: LogLevel; message: string }[];
  controller: AbortController;
};

export function stepContext(
  step: Record<string, unknown>,
  opts: { scope?: Record<string, unknown>; cursor?: string | null } = {},
): TestStep {
  const parsed: Step = stepSchema.parse({ slug: 'step', ...step });
  const controller = new AbortController();
  const counters: Counters = { rows_in: 0, rows_out: 0, bytes_in: 0, bytes_out: 0 };
  const lines: TestStep['lines'] = [];
  const cursor = opts.cursor ?? null;
  const scope = {
    ...opts.scope,
    runtime: {
      run_slug: 'run-1',
      input: {},
      env: {},
      secrets: {},
      incremental: { lower_bound: { cursor } },
      ...((opts.scope?.runtime as object) ?? {}),
    },
  };
  return {
    runSlug: 'run-1',
    step: parsed,
    signal: controller.signal,
    controller,
    render: (value) => renderValue(value, scopeResolver(scope)),
    lowerBoundCursor: cursor,
    log: (level, message) => lines.push({ level, message }),
    count: (delta) => {
      for (const [k, v] of Object.entries(delta)) counters[k as keyof Counters] += v ?? 0;
    },
    counters,
    lines,
  };
}

/** Every batch of a rows or JSON payload, and the sizes of the batches as they came. */
export async function collect(payload: Payload): Promise<{ items: unknown[]; sizes: number[] }> {
  if (payload.kind !== 'rows' && payload.kind !== 'json') throw new Error(`not batched: ${payload.kind}`);
  const items: unknown[] = [];
  const sizes: number[] = [];
  for await (const batch of payload.batches as AsyncIterable<unknown[]>) {
    sizes.push(batch.length);
    for (const item of batch) items.push(item);
  }
  return { items, sizes };
}

/** All bytes of a CSV or file payload. */
export async function bytesOf(payload: Payload): Promise<Buffer> {
  if (payload.kind !== 'csv' && payload.kind !== 'file') throw new Error(`no bytes: ${payload.kind}`);
  const chunks: Buffer[] = [];
  for await (const c of payload.chunks) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks);
}

/** A payload from literal batches (what an upstream step would stream). */
export async function* batches<T = unknown>(...items: T[][]): AsyncGenerator<T[]> {
  for (const b of items) yield b;
}

export async function* chunksOf(...parts: (string | Buffer)[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield typeof p === 'string' ? Buffer.from(p) : p;
}
