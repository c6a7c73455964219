import type { Payload } from './payloads';
import { openTransform, preloadDuck, type TransformOutput } from './transform';
import {
  type FromHost,
  type InputPart,
  nextItem,
  type OutputPart,
  pulledItems,
  streamName,
  type ToHost,
  toWire,
  type WireInput,
  type WireItem,
} from './transform-wire';

// The transform host: a child process that runs transforms for its parent (transform-remote.ts)
// with the engine's own openTransform, so DuckDB is loaded here and never in the parent. The
// inputs are rebuilt as payloads whose streams pull each batch or chunk from the parent; the
// result's batches or CSV chunks are pulled by the parent the same way. Files and named pipes are
// made in the step's directory, which both processes share. The host ends when its channel
// closes: when the parent stops it after an idle spell, or when the parent is gone.

type Channel = {
  on(event: 'message', fn: (m: ToHost) => void): unknown;
  once(event: 'disconnect', fn: () => void): unknown;
  send?(m: FromHost): unknown;
};

type Session = {
  controller: AbortController;
  /** Pulls waiting for the parent's item, by stream name. */
  waiting: Map<string, { resolve(item: WireItem): void; reject(err: Error): void }>;
  output: TransformOutput | null;
  outputs: Map<OutputPart, AsyncIterator<unknown>>;
  closed: Promise<void> | null;
};

/** Answers the parent's messages on `channel` until it disconnects. */
export function serveTransforms(channel: Channel = process as unknown as Channel): Promise<void> {
  // Started because a run with a transform started: DuckDB loads while its inputs are read.
  preloadDuck();
  const sessions = new Map<number, Session>();
  const send = (m: FromHost) => {
    try {
      channel.send?.(m);
    } catch {
      // The parent is gone: the disconnect ends everything.
    }
  };

  const pull = (id: number, s: Session, stream: string) =>
    new Promise<WireItem>((resolve, reject) => {
      s.waiting.set(stream, { resolve, reject });
      send({ t: 'pull', id, stream });
    });

  /** One input stream pulled from the parent; `onEnd` gets the records a JSON array held. */
  const pulled = <T>(id: number, s: Session, stream: string, onEnd?: (count: number) => void) =>
    pulledItems<T>(() => pull(id, s, stream), onEnd);

  const payloadOf = (id: number, s: Session, input: WireInput, i: number): Payload => {
    const stream = (part: InputPart) => streamName(i, part);
    switch (input.kind) {
      case 'rows':
        return {
          kind: 'rows',
          columns: input.columns,
          batches: pulled<unknown[][]>(id, s, stream('batches')),
        };
      case 'json': {
        let count = 0;
        return {
          kind: 'json',
          batches: pulled<unknown[]>(id, s, stream('batches')),
          ...(input.array
            ? {
                array: {
                  chunks: pulled<Uint8Array>(id, s, stream('array'), (n) => {
                    count = n;
                  }),
                  count: () => count,
                  lines: input.array.lines,
                },
              }
            : {}),
        };
      }
      case 'csv':
        return {
          kind: 'csv',
          delimiter: input.delimiter,
          header: input.header,
          chunks: pulled<Uint8Array>(id, s, stream('chunks')),
        };
      case 'form':
        // openTransform refuses these with the in-process message, which names the kind.
        return { kind: 'form', encoding: 'urlencoded', fields: [] };
      default:
        return { kind: 'file', mimeType: 'application/octet-stream', chunks: (async function* () {})() };
    }
  };

  const close = (id: number, s: Session) =>
    (s.closed ??= (async () => {
      for (const w of s.waiting.values()) w.reject(new Error('the transform closed'));
      s.waiting.clear();
      await s.output?.close().catch(() => {});
      sessions.delete(id);
    })());

  const open = async (m: Extract<ToHost, { t: 'open' }>) => {
    const s: Session = {
      controller: new AbortController(),
      waiting: new Map(),
      output: null,
      outputs: new Map(),
      closed: null,
    };
    sessions.set(m.id, s);
    try {
      const out = await openTransform({
        ...m.options,
        inputs: m.inputs.map((input, i) => ({ slug: input.slug, payload: payloadOf(m.id, s, input, i) })),
        signal: s.controller.signal,
        log: (level, message) => send({ t: 'log', id: m.id, level, message }),
      });
      s.output = out;
      if (s.closed) {
        await out.close().catch(() => {});
        return;
      }
      s.outputs.set('batches', out.payload.batches[Symbol.asyncIterator]());
      if (out.payload.csv) s.outputs.set('csv', out.payload.csv.chunks[Symbol.asyncIterator]());
      send({ t: 'opened', id: m.id, columns: out.payload.columns, csv: !!out.payload.csv });
    } catch (err) {
      send({ t: 'failed', id: m.id, error: toWire(err) });
      await close(m.id, s);
    }
  };

  const next = async (id: number, s: Session, stream: OutputPart) => {
    const it = s.outputs.get(stream);
    const item = it
      ? await nextItem(it, () => (stream === 'csv' ? s.output?.payload.csv?.count() : undefined))
      : { error: toWire(new Error(`the result has no ${stream}`)) };
    send({ t: 'item', id, stream, ...item });
  };

  channel.on('message', (m: ToHost) => {
    if (m.t === 'open') {
      open(m);
      return;
    }
    const s = sessions.get(m.id);
    if (!s) {
      if (m.t === 'close') send({ t: 'closed', id: m.id });
      return;
    }
    switch (m.t) {
      case 'item': {
        const w = s.waiting.get(m.stream);
        s.waiting.delete(m.stream);
        w?.resolve(m);
        break;
      }
      case 'next':
        next(m.id, s, m.stream);
        break;
      case 'abort':
        s.controller.abort();
        break;
      case 'close':
        close(m.id, s).then(() => send({ t: 'closed', id: m.id }));
        break;
    }
  });

  return new Promise<void>((resolve) => {
    channel.once('disconnect', () => {
      Promise.all(
        [...sessions].map(([id, s]) => {
          s.controller.abort();
          return close(id, s);
        }),
      ).then(() => resolve());
    });
  });
}
