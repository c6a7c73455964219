// Pulls an async byte stream ahead of its consumer, up to a bound. A JSON input's records go
// into DuckDB through named pipes (duck-stream.ts); DuckDB reads a pipe to its end before it
// parses any of it, so while it parses, nothing is written, and a writer that pulled its source
// only when it could write let the source's own work (the HTTP body arriving, the records cut
// into lines) wait for DuckDB and DuckDB wait for it in turn. Read ahead, that work happens while
// DuckDB parses (docs/benchmarks.md, "the records read ahead").

/**
 * `source`'s chunks, the same and in the same order, with up to `limit` bytes of them pulled
 * before they are asked for, from the moment this is called. The source's failure comes after
 * the chunks it gave before failing. Ending the iteration early (`return`) stops the pulling
 * and ends the source, without waiting for a read of the source in flight: the source is ended
 * once that read returned.
 */
export function readAhead(source: AsyncIterable<Uint8Array>, limit: number): AsyncGenerator<Uint8Array> {
  const it = source[Symbol.asyncIterator]();
  const queue: Uint8Array[] = [];
  let queued = 0;
  let ended = false;
  let failure: { err: unknown } | null = null;
  let closed = false;
  // Whoever waits: the consumer for a chunk, or the puller for room.
  const wake: { consumer: (() => void) | null; puller: (() => void) | null } = {
    consumer: null,
    puller: null,
  };
  const pulling = (async () => {
    try {
      while (!closed) {
        if (queued >= limit) {
          await new Promise<void>((r) => {
            wake.puller = r;
          });
          wake.puller = null;
          continue;
        }
        const r = await it.next();
        if (r.done || closed) break;
        if (r.value.byteLength === 0) continue;
        queue.push(r.value);
        queued += r.value.byteLength;
        wake.consumer?.();
      }
    } catch (err) {
      failure = { err };
    } finally {
      ended = true;
      wake.consumer?.();
    }
    // Ended early: the source ends here, once the read it had in flight returned.
    if (closed && !failure) await it.return?.();
  })();
  pulling.catch(() => {});
  return (async function* () {
    try {
      for (;;) {
        const chunk = queue.shift();
        if (chunk !== undefined) {
          queued -= chunk.byteLength;
          wake.puller?.();
          yield chunk;
          continue;
        }
        if (ended) break;
        await new Promise<void>((r) => {
          wake.consumer = r;
        });
        wake.consumer = null;
      }
      if (failure) throw (failure as { err: unknown }).err;
    } finally {
      // Ending early does not wait for the source's read in flight (a stalled body would hold
      // the consumer): the pulling stops and ends the source after it.
      if (!ended) {
        closed = true;
        wake.puller?.();
      }
    }
  })();
}
