// Small pieces for payload streams: a promise settled from outside, and a wrapper that says
// whether a stream was read to its end (a source's cursor only counts if it was).

export type Deferred<T> = { promise: Promise<T>; resolve(value: T): void; reject(err: unknown): void };

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Nobody may ever ask (the run failed elsewhere); that is not an unhandled rejection.
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/** Error of a payload that was dropped before its end: its cursor must not be committed. */
export class NotConsumedError extends Error {
  constructor() {
    super('the payload was not read to its end');
  }
}

/**
 * Passes a stream through; `done` runs after its last item, `failed` when it throws or the
 * consumer stops early.
 */
export async function* tracked<T>(
  source: AsyncIterable<T>,
  done: () => void,
  failed: (err: unknown) => void,
): AsyncGenerator<T> {
  let finished = false;
  try {
    for await (const item of source) yield item;
    finished = true;
    done();
  } catch (err) {
    finished = true;
    failed(err);
    throw err;
  } finally {
    if (!finished) failed(new NotConsumedError());
  }
}

/** An empty stream. */
export async function* none<T>(): AsyncGenerator<T> {}
