import type { ChildProcess } from 'node:child_process';
import type { Column, Payload } from './payloads';
import { RunError } from './run-error';
import type { TransformOptions, TransformOutput } from './transform';
import {
  type FromHost,
  fromWire,
  type InputPart,
  nextItem,
  type OutputPart,
  pulledItems,
  type ToHost,
  toWire,
  type WireInput,
  type WireItem,
} from './transform-wire';

// Transforms run in a transform host (transform-host.ts), a child process with DuckDB of its
// own, instead of in this process: what `sluice serve` does on the embedded store, whose process
// holds the store itself (docs/operations.md, "Transforms on the embedded store"). DuckDB's
// library (~45 MB resident once a transform ran, never given back) then stays out of that
// process, and a crash inside DuckDB ends the child and fails the run instead of taking the
// store down with it. The child starts when a run with a transform starts (`warm`, or else the
// first `open`) and stops once no transform has been open for `idleMs`. Each input's streams and
// the result are pulled one batch or chunk at a time over the IPC channel (transform-wire.ts).

/** Starts the host: a child process with an IPC channel using the `advanced` serialization. */
export type StartHost = () => ChildProcess;

export type OpenTransform = (o: TransformOptions) => Promise<TransformOutput>;

/** Where a run's transforms run, when not in the executor's own process. */
export type Transforms = {
  open: OpenTransform;
  /** A run with a transform starts: have the host ready by the time its inputs are. */
  warm(): void;
};

export type TransformHost = Transforms & {
  /** The child's process id while it runs (tests stop it). */
  readonly pid: number | null;
  /** Stops the child; transforms still open fail. */
  stop(): void;
};

/** How long the child stays after the last transform closed. */
export const HOST_IDLE_MS = 30_000;

type Waiter = { resolve(item: WireItem): void; reject(err: Error): void };

type Session = {
  o: TransformOptions;
  child: ChildProcess;
  /** The input streams the host has pulled from, by stream name. */
  inputs: Map<string, AsyncIterator<unknown>>;
  opened: { resolve(v: { columns: Column[]; csv: boolean }): void; reject(err: Error): void };
  /** The result's pulls waiting for their item. */
  waiting: Map<OutputPart, Waiter>;
  closed: (() => void) | null;
  /** Why the child is gone, once it is. */
  lost: Error | null;
};

const inputStream = (payload: Payload, part: InputPart): AsyncIterable<unknown> | null => {
  if (part === 'batches' && 'batches' in payload) return payload.batches;
  if (part === 'chunks' && payload.kind === 'csv') return payload.chunks;
  if (part === 'array' && payload.kind === 'json' && payload.array) return payload.array.chunks;
  return null;
};

const describe = (slug: string, payload: Payload): WireInput => {
  switch (payload.kind) {
    case 'rows':
      return { slug, kind: 'rows', columns: payload.columns };
    case 'json':
      return { slug, kind: 'json', array: payload.array ? { lines: !!payload.array.lines } : null };
    case 'csv':
      return { slug, kind: 'csv', delimiter: payload.delimiter, header: payload.header };
    default:
      return { slug, kind: payload.kind };
  }
};

export function transformHost(start: StartHost, idleMs = HOST_IDLE_MS): TransformHost {
  let child: ChildProcess | null = null;
  const sessions = new Map<number, Session>();
  let nextId = 1;
  let idle: NodeJS.Timeout | null = null;

  const send = (c: ChildProcess, m: ToHost) => {
    if (!c.connected) return;
    try {
      c.send(m);
    } catch {
      // Gone meanwhile: its exit fails the sessions.
    }
  };

  // The channel keeps this process alive only while a transform is open.
  const settle = () => {
    const c = child;
    if (!c) return;
    if (sessions.size > 0) {
      if (idle) clearTimeout(idle);
      idle = null;
      c.channel?.ref();
      return;
    }
    c.channel?.unref();
    if (idle) return;
    idle = setTimeout(() => {
      idle = null;
      if (sessions.size === 0 && child === c) stopChild(c);
    }, idleMs);
    idle.unref();
  };

  const stopChild = (c: ChildProcess) => {
    if (child === c) child = null;
    if (c.connected) c.disconnect();
  };

  const fail = (s: Session, err: Error) => {
    s.lost ??= err;
    s.opened.reject(err);
    for (const w of s.waiting.values()) w.reject(err);
    s.waiting.clear();
    s.closed?.();
  };

  const answerPull = async (id: number, s: Session, stream: string) => {
    const [index, part] = stream.split(':') as [string, InputPart];
    const payload = s.o.inputs[Number(index)]?.payload;
    let it = s.inputs.get(stream);
    if (!it) {
      const source = payload && inputStream(payload, part);
      it = source ? source[Symbol.asyncIterator]() : undefined;
      if (it) s.inputs.set(stream, it);
    }
    const item = it
      ? await nextItem(it, () =>
          part === 'array' && payload?.kind === 'json' ? payload.array?.count() : undefined,
        )
      : { error: toWire(new Error(`no ${part} in input ${index}`)) };
    send(s.child, { t: 'item', id, stream, ...item });
  };

  const onMessage = (m: FromHost) => {
    const s = sessions.get(m.id);
    if (!s) return;
    switch (m.t) {
      case 'pull':
        answerPull(m.id, s, m.stream);
        break;
      case 'opened':
        s.opened.resolve({ columns: m.columns, csv: m.csv });
        break;
      case 'failed':
        s.opened.reject(fromWire(m.error));
        break;
      case 'item': {
        const w = s.waiting.get(m.stream);
        s.waiting.delete(m.stream);
        w?.resolve(m);
        break;
      }
      case 'log':
        s.o.log?.(m.level, m.message);
        break;
      case 'closed':
        s.closed?.();
        break;
    }
  };

  const ensureChild = (): ChildProcess => {
    if (child) return child;
    const c = start();
    child = c;
    c.on('message', onMessage);
    let gone = false;
    const ended = (why: string) => {
      if (gone) return;
      gone = true;
      if (child === c) child = null;
      for (const s of sessions.values())
        if (s.child === c)
          fail(
            s,
            new RunError('TRANSFORM_FAILED', `transform ${s.o.slug}: its DuckDB process ${why}`, s.o.slug),
          );
    };
    // A child that could not be started at all (no pid) gets 'error', then 'close'.
    c.on('error', (err: NodeJS.ErrnoException) => {
      if (c.pid === undefined) ended(`could not start (${err.code ?? err.message})`);
    });
    // 'close' follows 'exit', and comes for a child that never started too.
    c.once('close', (code, signal) => ended(`ended (${signal ?? `exit code ${code}`})`));
    c.unref();
    return c;
  };

  const open: OpenTransform = async (o) => {
    const c = ensureChild();
    const id = nextId++;
    let opened!: Session['opened'];
    const ready = new Promise<{ columns: Column[]; csv: boolean }>((resolve, reject) => {
      opened = { resolve, reject };
    });
    ready.catch(() => {});
    const s: Session = {
      o,
      child: c,
      inputs: new Map(),
      opened,
      waiting: new Map(),
      closed: null,
      lost: null,
    };
    sessions.set(id, s);
    settle();
    const onAbort = () => send(c, { t: 'abort', id });
    o.signal.addEventListener('abort', onAbort, { once: true });

    let closing: Promise<void> | null = null;
    const close = () =>
      (closing ??= (async () => {
        o.signal.removeEventListener('abort', onAbort);
        if (!s.lost && c.connected) {
          const done = new Promise<void>((resolve) => {
            s.closed = resolve;
          });
          send(c, { t: 'close', id });
          await done;
        }
        // The inputs are the executor's to finish (it drains or stops them), not this side's.
        sessions.delete(id);
        settle();
      })());

    send(c, {
      t: 'open',
      id,
      options: {
        slug: o.slug,
        sql: o.sql,
        params: o.params,
        dir: o.dir,
        memoryLimit: o.memoryLimit,
        threads: o.threads,
        jsonSampleRecords: o.jsonSampleRecords,
      },
      inputs: o.inputs.map((input) => describe(input.slug, input.payload)),
    });
    if (o.signal.aborted) onAbort();

    let shape: { columns: Column[]; csv: boolean };
    try {
      shape = await ready;
    } catch (err) {
      await close();
      throw err;
    }

    const pullOut = (stream: OutputPart) =>
      new Promise<WireItem>((resolve, reject) => {
        if (s.lost) {
          reject(s.lost);
          return;
        }
        s.waiting.set(stream, { resolve, reject });
        send(c, { t: 'next', id, stream });
      });
    let csvRows = 0;
    const csvChunks = () =>
      pulledItems<Uint8Array>(
        () => pullOut('csv'),
        (n: number) => {
          csvRows = n;
        },
      );
    return {
      payload: {
        kind: 'rows',
        columns: shape.columns,
        batches: pulledItems<unknown[][]>(() => pullOut('batches')),
        ...(shape.csv ? { csv: { chunks: csvChunks(), count: () => csvRows } } : {}),
      },
      close,
    };
  };

  return {
    open,
    warm() {
      ensureChild();
      // The idle spell starts again: a child about to stop would stop under the run's transform.
      if (idle) clearTimeout(idle);
      idle = null;
      settle();
    },
    get pid() {
      return child?.pid ?? null;
    },
    stop() {
      if (child) stopChild(child);
    },
  };
}
