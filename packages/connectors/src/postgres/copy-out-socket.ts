// What the two readers of `COPY … TO STDOUT` off pg's socket share (copy-out-stream.ts, which
// hands on the rows' bytes, and copy-frames-out.ts, which hands on whole CopyData messages): the
// message codes, taking the socket from pg for the copy, and giving it back after CopyDone or an
// error with the bytes that followed (docs/benchmarks.md, "The data path toward its limit").

export const COPY_DATA = 0x64; // 'd'
export const COPY_DONE = 0x63; // 'c'
const COPY_OUT_RESPONSE = 0x48; // 'H'
const NOTICE = 0x4e; // 'N'
const PARAMETER_STATUS = 0x53; // 'S'
const NOTIFICATION = 0x41; // 'A'
/** Messages the server may send inside a copy that the reader drops. */
export const SKIPPED = new Set([COPY_OUT_RESPONSE, NOTICE, PARAMETER_STATUS, NOTIFICATION]);

/** The part of pg's connection the readers use: its socket and the simple query. */
export type Connection = {
  stream: {
    read(): Buffer | null;
    listeners(event: 'data'): ((b: Buffer) => void)[];
    on(event: 'data' | 'readable', fn: (...a: never[]) => void): void;
    removeListener(event: 'data' | 'readable', fn: (...a: never[]) => void): void;
    pause(): void;
    resume(): void;
  };
  query(text: string): void;
};

/**
 * Takes the socket from pg's reader for the copy (read on 'readable' from now on) and sends the
 * statement; returns pg's reader, for `giveSocket`.
 */
export function takeSocket(c: Connection, onReadable: () => void, text: string): (b: Buffer) => void {
  const listeners = c.stream.listeners('data');
  if (listeners.length !== 1) throw new Error('the connection has an unexpected reader');
  const handler = listeners[0];
  c.stream.removeListener('data', handler);
  c.stream.pause();
  c.stream.on('readable', onReadable);
  c.query(text);
  return handler;
}

/** Gives the connection back to pg's reader with the bytes after the copy. */
export function giveSocket(
  c: Connection,
  handler: (b: Buffer) => void,
  onReadable: () => void,
  rest: Buffer,
): void {
  c.stream.removeListener('readable', onReadable);
  c.stream.on('data', handler);
  if (rest.length > 0) handler(rest);
  process.nextTick(() => c.stream.resume());
}

/** The rows of a COPY's command tag, or null. */
export function copyRows(msg: { text?: string }): number | null {
  const m = /COPY (\d+)/.exec(msg?.text ?? '');
  return m ? Number(m[1]) : null;
}
