import { Canceled } from './meter';
import type { Column } from './payloads';
import { RunError, type RunErrorCode } from './run-error';
import type { TransformOptions } from './transform';

// The messages between a process that runs a pipeline and its transform host, the child process
// whose DuckDB runs the transforms (transform-remote.ts, transform-host.ts). They travel over
// Node's IPC channel with its `advanced` serialization, so rows keep their JavaScript types
// (Date, bigint, Buffer, Uint8Array) as the in-process transform would see them. Every stream
// between the two is pulled: one item is asked for, one is sent, so neither side holds more
// than a batch or a chunk of another's.

/** An input payload as the host rebuilds it; its streams are pulled by name (`streamName`). */
export type WireInput =
  | { slug: string; kind: 'rows'; columns: Column[] }
  | { slug: string; kind: 'json'; array: { lines: boolean } | null }
  | { slug: string; kind: 'csv'; delimiter: string; header: boolean }
  | { slug: string; kind: 'file' | 'form' };

/** An input's stream: its batches, a CSV's chunks, or a JSON array's bytes. */
export type InputPart = 'batches' | 'chunks' | 'array';
export const streamName = (input: number, part: InputPart) => `${input}:${part}`;

/** The result's two shapes (a consumer reads one). */
export type OutputPart = 'batches' | 'csv';

export type WireOptions = Pick<
  TransformOptions,
  'slug' | 'sql' | 'params' | 'dir' | 'memoryLimit' | 'threads' | 'jsonSampleRecords'
>;

export type WireError = {
  name: string;
  message: string;
  code?: RunErrorCode;
  step?: string | null;
  retryable?: boolean;
};

/** One pulled item: a value, the end (with the records a JSON array held), or a failure. */
export type WireItem = { value?: unknown; done?: boolean; count?: number; error?: WireError };

/** Parent → host. */
export type ToHost =
  | { t: 'open'; id: number; options: WireOptions; inputs: WireInput[] }
  | ({ t: 'item'; id: number; stream: string } & WireItem)
  | { t: 'next'; id: number; stream: OutputPart }
  | { t: 'abort'; id: number }
  | { t: 'close'; id: number };

/** Host → parent. */
export type FromHost =
  | { t: 'pull'; id: number; stream: string }
  | { t: 'opened'; id: number; columns: Column[]; csv: boolean }
  | { t: 'failed'; id: number; error: WireError }
  | ({ t: 'item'; id: number; stream: OutputPart } & WireItem)
  | { t: 'log'; id: number; level: 'info' | 'warn'; message: string }
  | { t: 'closed'; id: number };

export function toWire(err: unknown): WireError {
  if (err instanceof RunError)
    return {
      name: 'RunError',
      message: err.message,
      code: err.code,
      step: err.step,
      retryable: err.retryable,
    };
  if (err instanceof Canceled) return { name: 'Canceled', message: err.message };
  return { name: 'Error', message: err instanceof Error ? err.message : String(err) };
}

/**
 * The answer to a pull: the stream's next value, its end (with `countAtEnd()`, e.g. the records
 * a JSON array held), or its failure.
 */
export async function nextItem(
  it: AsyncIterator<unknown>,
  countAtEnd: () => number | undefined = () => undefined,
): Promise<WireItem> {
  try {
    const r = await it.next();
    return r.done ? { done: true, count: countAtEnd() } : { value: r.value };
  } catch (err) {
    return { error: toWire(err) };
  }
}

/** A stream rebuilt from pulls of its items; `onEnd` gets the count its end carried. */
export async function* pulledItems<T>(
  pull: () => Promise<WireItem>,
  onEnd?: (count: number) => void,
): AsyncGenerator<T> {
  for (;;) {
    const item = await pull();
    if (item.error) throw fromWire(item.error);
    if (item.done) {
      onEnd?.(item.count ?? 0);
      return;
    }
    yield item.value as T;
  }
}

export function fromWire(w: WireError): Error {
  if (w.name === 'RunError')
    return new RunError(w.code ?? 'TRANSFORM_FAILED', w.message, w.step ?? null, !!w.retryable);
  if (w.name === 'Canceled') return new Canceled();
  return new Error(w.message);
}
