import type { NativeRows, Payload, RecordBytes, RowsPayload } from './payloads';

// Wrappers that sit between a step and the payload streams it reads or writes: they count
// rows and bytes as they pass, notice the end of a stream, stop promptly on abort, and let the
// executor decide what happens to a stream its consumer left unfinished.

/** Thrown into a stream or a pending call when the run stops (cancel or another step failed). */
export class Canceled extends Error {
  constructor() {
    super('canceled');
    this.name = 'Canceled';
  }
}

/**
 * Waits for `p` unless the signal aborts first. A port that ignores its signal cannot hold the
 * run: its promise is left behind (its rejection handled) and the step stops now. The abort
 * listener is removed as soon as `p` settles: a long stream makes one call per batch, and
 * nothing of a settled call may stay reachable from the signal.
 */
export function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  p.catch(() => {});
  if (signal.aborted) return Promise.reject(new Canceled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Canceled());
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

type MeterOptions<T> = {
  signal: AbortSignal;
  /** Called for every item handed to the consumer (not for drained items). */
  count?(item: T): void;
  /** Called once, synchronously, when the underlying stream throws. */
  onError?(err: unknown): void;
};

/**
 * A single-use view of an async iterable. A consumer that stops early (break, return) does not
 * close the underlying stream: `finish(true)` drains the rest so the producer ends normally
 * (its cursor depends on it), `finish(false)` closes it.
 */
export class Meter<T> implements AsyncIterable<T> {
  readonly ended: Promise<void>;
  private it: AsyncIterator<T> | null = null;
  private taken = false;
  /** True once a consumer asked for the iterator (or a drain began). */
  get started(): boolean {
    return this.taken;
  }
  private done = false;
  private resolveEnded!: () => void;
  private rejectEnded!: (err: unknown) => void;

  constructor(
    private readonly source: AsyncIterable<T>,
    private readonly opts: MeterOptions<T>,
  ) {
    this.ended = new Promise<void>((resolve, reject) => {
      this.resolveEnded = resolve;
      this.rejectEnded = reject;
    });
    this.ended.catch(() => {});
  }

  /** A consumer asked for the stream (or it was drained). */
  get isTaken(): boolean {
    return this.taken;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.taken) throw new Error('a payload stream can be read only once');
    this.taken = true;
    return {
      next: () => this.pull(true),
      // Leaves the underlying stream open: the executor finishes it once the consumer settles.
      return: async () => ({ done: true, value: undefined }),
    };
  }

  private async pull(count: boolean): Promise<IteratorResult<T>> {
    if (this.done) return { done: true, value: undefined };
    const { signal } = this.opts;
    if (signal.aborted) throw new Canceled();
    this.it ??= this.source[Symbol.asyncIterator]();
    let r: IteratorResult<T>;
    try {
      r = await raceAbort(this.it.next(), signal);
    } catch (err) {
      if (!(err instanceof Canceled)) {
        this.done = true;
        this.opts.onError?.(err);
        this.rejectEnded(err);
      }
      throw err;
    }
    if (r.done) {
      this.done = true;
      this.resolveEnded();
      return r;
    }
    if (count) this.opts.count?.(r.value);
    return r;
  }

  /** Drains what the consumer left (ok) or closes the underlying stream (not ok). */
  async finish(ok: boolean): Promise<void> {
    if (this.done) return;
    if (ok) {
      this.taken = true;
      while (!(await this.pull(false)).done) {}
      return;
    }
    this.done = true;
    this.rejectEnded(new Canceled());
    // An async generator busy in next() queues return(); never wait for it.
    this.it?.return?.()?.catch(() => {});
  }
}

export type MeteredPayload = {
  payload: Payload;
  /** Resolves when every stream of the payload reached its end; rejects if one failed. */
  ended: Promise<void>;
  finish(ok: boolean): Promise<void>;
};

export type MeterCallbacks = {
  signal: AbortSignal;
  rows?(n: number): void;
  bytes?(n: number): void;
  onError?(err: unknown): void;
};

/** A stream offered in two shapes (batches, or record bytes): the consumer reads one of them. */
type Either = { main: Meter<unknown>; alt: Meter<unknown> };
type Slot = Meter<unknown> | Either;

const chosen = (s: Slot): Meter<unknown> => (s instanceof Meter ? s : s.alt.isTaken ? s.alt : s.main);

function endedOf(s: Slot): Promise<void> {
  if (s instanceof Meter) return s.ended;
  // Whichever shape the consumer read ends the payload; the other is never read.
  const p = new Promise<void>((resolve, reject) => {
    s.main.ended.then(resolve, (err) => !s.alt.isTaken && reject(err));
    s.alt.ended.then(resolve, (err) => s.alt.isTaken && reject(err));
  });
  p.catch(() => {});
  return p;
}

/** Wraps every stream of a payload (a form's file fields included). */
export function meterPayload(p: Payload, cb: MeterCallbacks): MeteredPayload {
  const slots: Slot[] = [];
  const meter = <T>(source: AsyncIterable<T>, count?: (item: T) => void): Meter<T> =>
    new Meter(source, { signal: cb.signal, count, onError: cb.onError });
  const wrap = <T>(source: AsyncIterable<T>, count: (item: T) => void): Meter<T> => {
    const m = meter(source, count);
    slots.push(m as Meter<unknown>);
    return m;
  };
  /**
   * Batches plus their byte shape: the bytes are counted as they pass, the rows once the bytes
   * ended, from their count.
   */
  const either = <T>(batches: AsyncIterable<T[]>, raw: RecordBytes) => {
    const main = meter(batches, rowCount as (item: T[]) => void);
    const alt = meter(raw.chunks, byteCount);
    alt.ended.then(
      () => cb.rows?.(raw.count()),
      () => {},
    );
    slots.push({ main: main as Meter<unknown>, alt: alt as Meter<unknown> });
    return { batches: main, raw: { ...raw, chunks: alt } };
  };
  const rowCount = (batch: unknown[]) => cb.rows?.(batch.length);
  const byteCount = (chunk: Uint8Array) => cb.bytes?.(chunk.byteLength);
  if (p.kind === 'rows' && p.native) return meterNativeRows(p, p.native, cb);
  let payload: Payload;
  switch (p.kind) {
    case 'rows':
      if (p.csv) {
        const e = either(p.batches, p.csv);
        payload = { ...p, batches: e.batches, csv: { ...p.csv, ...e.raw } };
      } else payload = { ...p, batches: wrap(p.batches, rowCount) };
      break;
    case 'json':
      if (p.array) {
        const e = either(p.batches, p.array);
        payload = { ...p, batches: e.batches, array: e.raw };
      } else payload = { ...p, batches: wrap(p.batches, rowCount) };
      break;
    case 'csv':
      payload = { ...p, chunks: wrap(p.chunks, byteCount) };
      break;
    case 'file':
      payload = { ...p, chunks: wrap(p.chunks, byteCount) };
      break;
    case 'form':
      payload = {
        ...p,
        fields: p.fields.map((f) =>
          'file' in f ? { name: f.name, file: { ...f.file, chunks: wrap(f.file.chunks, byteCount) } } : f,
        ),
      };
      break;
  }
  const ended = Promise.all(slots.map(endedOf)).then(() => {});
  ended.catch(() => {});
  return {
    payload,
    ended,
    finish: async (ok) => {
      // One after the other: draining a form's fields in order keeps multipart readers sane.
      for (const s of slots) await chosen(s).finish(ok);
    },
  };
}

/**
 * Rows offered both as batches and natively: the consumer takes one of the two. The batches
 * count rows as they pass; the native bytes count bytes as they pass and the rows the source
 * reports at their end. Whatever the consumer took is what `finish` drains or closes.
 */
function meterNativeRows(p: RowsPayload, native: NativeRows, cb: MeterCallbacks): MeteredPayload {
  const batches = new Meter(p.batches, {
    signal: cb.signal,
    count: (batch: unknown[][]) => cb.rows?.(batch.length),
    onError: cb.onError,
  });
  let bytes: Meter<Uint8Array> | null = null;
  const nativeEnded = deferred<void>();
  const open: NativeRows['open'] = (format, opts) => {
    if (bytes || batches.started) throw new Error('a payload stream can be read only once');
    const inner = native.open(format, opts);
    const m = new Meter(inner.chunks, {
      signal: cb.signal,
      count: (chunk) => cb.bytes?.(chunk.byteLength),
      onError: cb.onError,
    });
    bytes = m;
    m.ended.then(
      () => {
        cb.rows?.(inner.rows());
        nativeEnded.resolve();
      },
      (err) => nativeEnded.reject(err),
    );
    return { chunks: m, rows: inner.rows, framed: inner.framed === true };
  };
  const ended = Promise.race([batches.ended, nativeEnded.promise]);
  ended.catch(() => {});
  const guarded: AsyncIterable<unknown[][]> = {
    [Symbol.asyncIterator]: () => {
      if (bytes) throw new Error('a payload stream can be read only once');
      return batches[Symbol.asyncIterator]();
    },
  };
  return {
    payload: { ...p, batches: guarded, native: { ...native, open } },
    ended,
    finish: async (ok) => {
      if (bytes) await (bytes as Meter<Uint8Array>).finish(ok);
      else await batches.finish(ok);
    },
  };
}

export type Deferred<T> = { promise: Promise<T>; resolve(v: T): void; reject(e: unknown): void };

/** A promise settled from outside; its rejection is handled so nobody has to wait on it. */
export function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((a, b) => {
    resolve = a;
    reject = b;
  });
  promise.catch(() => {});
  return { promise, resolve, reject };
}
