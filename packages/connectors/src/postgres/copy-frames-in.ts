import type pg from 'pg';

// `COPY … FROM STDIN` fed with CopyData messages that are already framed: a PostgreSQL
// source's own COPY output, message headers and all (copy-out-stream.ts with `framed`). A
// server's CopyData out and a client's CopyData in are the same message, so each chunk goes
// onto the target's socket as it is, with the socket's backpressure; this side adds only the
// closing CopyDone, or a CopyFail when the input fails (the server then ends the COPY with an
// error and nothing of it stays). The chunks must hold whole messages only (the reader
// guarantees it), so a CopyFail never lands inside one. The row count is the server's command
// tag. A chunk of several messages leaves as one (`oneCopyData`): the server does a little work
// per message, and a PostgreSQL source sends one a row. Chunks of COPY's bytes without the
// framing (any other source of COPY input: the MySQL encoders, CSV) go the same way, each as one
// CopyData message, its header written with it (one writev: the socket is corked to the next
// tick). See docs/benchmarks.md, "The data path toward its limit".

const COPY_DONE = Buffer.from([0x63, 0, 0, 0, 4]);

/** A CopyFail message: 'f', its length, the reason as a C string. */
function copyFail(reason: string): Buffer {
  const text = Buffer.from(`${reason}\0`);
  const message = Buffer.allocUnsafe(5 + text.length);
  message[0] = 0x66;
  message.writeUInt32BE(4 + text.length, 1);
  text.copy(message, 5);
  return message;
}

/** A CopyData message's header ('d', its length) for a body of `n` bytes. */
function copyDataHeader(n: number): Buffer {
  const header = Buffer.allocUnsafe(5);
  header[0] = 0x64;
  header.writeUInt32BE(n + 4, 1);
  return header;
}

/** A message's length field (big-endian, unsigned) at `at`. */
const lengthAt = (b: Uint8Array, at: number) =>
  b[at] * 0x1000000 + ((b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]);

/**
 * The CopyData messages of `chunk` as one message, made in the chunk's own bytes: a COPY's input
 * is a byte stream whose message boundaries mean nothing to the server, and each message costs it
 * a read of its own (a PostgreSQL source sends one a row). Each body moves left over the headers
 * before it; nothing outside the chunk is touched and nothing is allocated. The caller gives the
 * chunk up: the framed chunks are slices of the source's socket reads that nothing reads after
 * they are handed on (copy-frames-out.ts). A chunk of one message, or of anything but whole
 * CopyData messages, is returned as it is (docs/benchmarks.md, "CopyData messages joined").
 */
export function oneCopyData(chunk: Uint8Array): Uint8Array {
  const n = chunk.byteLength;
  let r = 0;
  let messages = 0;
  while (r + 5 <= n && chunk[r] === 0x64 && lengthAt(chunk, r + 1) >= 4) {
    r += 1 + lengthAt(chunk, r + 1);
    messages++;
  }
  if (messages < 2 || r !== n) return chunk;
  // The first header stays where it is; the bodies close up behind it.
  let w = 5;
  r = 0;
  while (r < n) {
    const length = lengthAt(chunk, r + 1) - 4;
    if (w !== r + 5) chunk.copyWithin(w, r + 5, r + 5 + length);
    w += length;
    r += 5 + length;
  }
  const total = w - 1;
  chunk[1] = total >>> 24;
  chunk[2] = (total >>> 16) & 0xff;
  chunk[3] = (total >>> 8) & 0xff;
  chunk[4] = total & 0xff;
  return chunk.subarray(0, w);
}

/** The part of pg's connection used here: its socket. */
type Socket = {
  write(b: Uint8Array): boolean;
  cork(): void;
  uncork(): void;
  once(event: 'drain', fn: () => void): void;
  removeListener(event: 'drain', fn: () => void): void;
};
type Connection = { stream: Socket; query(text: string): void };

/** The statement as pg's active query: its socket once the server is in copy-in mode. */
class CopyFramesQuery implements pg.Submittable {
  rowCount = 0;
  /** Settled by the server: true once it answered ReadyForQuery or failed. */
  ended = false;
  readonly ready: Promise<Socket>;
  readonly done: Promise<void>;
  private onReady!: (s: Socket) => void;
  private onReadyFailed!: (e: Error) => void;
  private onDone!: () => void;
  private onFailed!: (e: Error) => void;

  constructor(private readonly text: string) {
    this.ready = new Promise((resolve, reject) => {
      this.onReady = resolve;
      this.onReadyFailed = reject;
    });
    this.done = new Promise((resolve, reject) => {
      this.onDone = resolve;
      this.onFailed = reject;
    });
    this.ready.catch(() => {});
    this.done.catch(() => {});
  }

  submit(connection: unknown): void {
    (connection as Connection).query(this.text);
  }

  /** pg sets its query_timeout hook here; the copy has its own idle bound instead. */
  callback(): void {}

  handleCopyInResponse(connection: unknown): void {
    this.onReady((connection as Connection).stream);
  }

  handleCommandComplete(msg: { text?: string }): void {
    const m = /COPY (\d+)/.exec(msg?.text ?? '');
    if (m) this.rowCount = Number(m[1]);
  }

  handleReadyForQuery(): void {
    this.ended = true;
    this.onDone();
  }

  handleError(err: Error): void {
    this.ended = true;
    this.onReadyFailed(err);
    this.onFailed(err);
  }
}

/**
 * Runs `text` (a `COPY … FROM STDIN`) on `client` with `chunks` as its CopyData messages; calls
 * `sent` with each chunk before it is written. Resolves with the server's row count; rejects
 * with the input's error (after a CopyFail, once the server has ended the COPY) or the server's.
 */
export async function copyFramesIn(
  client: pg.Client,
  text: string,
  chunks: AsyncIterable<Uint8Array>,
  sent: (chunk: Uint8Array) => void,
  /** The chunks are COPY's bytes without the messages' framing: each goes as a CopyData message of its own. */
  frame = false,
): Promise<number> {
  const copy = new CopyFramesQuery(text);
  client.query(copy);
  const it = chunks[Symbol.asyncIterator]();
  // The first chunk is asked for now, while the server answers the COPY: the input's own start
  // (a PostgreSQL source's lift and COPY, each a round trip to its server) goes on beside it.
  let first: Promise<IteratorResult<Uint8Array>> | null = it.next();
  first.catch(() => {});
  let socket: Socket;
  try {
    socket = await copy.ready;
  } catch (err) {
    // Runs once the first chunk is in (or failed): the input ends there.
    it.return?.()?.catch(() => {});
    throw err;
  }
  // A wait for the input or the socket ends early when the server fails the copy (or the
  // connection is lost). One settled wait at a time: a race against one long-pending promise
  // would keep every chunk reachable from its reactions until the copy ends.
  let serverError: { err: unknown } | null = null;
  let interrupt: ((err: unknown) => void) | null = null;
  copy.done.catch((err) => {
    serverError = { err };
    interrupt?.(err);
  });
  const unlessFailed = <T>(work: Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (serverError) return reject(serverError.err);
      interrupt = reject;
      work.then(resolve, reject);
    });
  let inputDone = false;
  // Chunks that come together (a message completed across socket chunks, then the run of whole
  // messages after it) leave in one write: the socket is corked until the next tick.
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  try {
    for (;;) {
      const next = await unlessFailed(first ?? it.next());
      first = null;
      if (next.done) {
        inputDone = true;
        break;
      }
      const chunk = next.value;
      if (frame && chunk.byteLength === 0) continue;
      sent(chunk);
      if (!corked) {
        corked = true;
        socket.cork();
        process.nextTick(uncork);
      }
      // Unframed, the message's header goes first, in the same write (the socket is corked).
      if (frame) socket.write(copyDataHeader(chunk.byteLength));
      if (!socket.write(frame ? chunk : oneCopyData(chunk))) {
        let wake: (() => void) | undefined;
        try {
          await unlessFailed(
            new Promise<void>((resolve) => {
              wake = resolve;
              socket.once('drain', resolve);
            }),
          );
        } finally {
          socket.removeListener('drain', wake!);
        }
      }
    }
  } catch (err) {
    if (!copy.ended) {
      // The input failed: the server ends the COPY with an error; nothing of it is kept.
      socket.write(copyFail('the source of the copy failed'));
      await copy.done.catch(() => {});
    } else if (!inputDone) {
      // The server failed first: the input stops here.
      it.return?.()?.catch(() => {});
    }
    throw err;
  }
  socket.write(COPY_DONE);
  await copy.done;
  return copy.rowCount;
}
