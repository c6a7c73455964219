import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../http/logging';
import { startPeriodic } from './periodic';

// The helper every periodic loop uses, on vitest's fake timers: ticks never overlap, stop waits
// for the tick in progress, and a failed tick is logged (without its message) and the next runs.

const EVERY_MS = 1000;

function deferred() {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function capturedLog() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { log: createLogger({ level: 'info', stream }), lines };
}

/** Lets the promise reactions queued by a tick run. */
const settle = () => vi.advanceTimersByTimeAsync(0);

describe('startPeriodic', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs once per interval and skips ticks that come due while one is still running', async () => {
    const { log } = capturedLog();
    const ticks: ReturnType<typeof deferred>[] = [];
    const p = startPeriodic({
      name: 'test loop',
      everyMs: EVERY_MS,
      run: () => {
        const d = deferred();
        ticks.push(d);
        return d.promise;
      },
      log,
    });
    await vi.advanceTimersByTimeAsync(EVERY_MS - 1);
    expect(ticks).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(ticks).toHaveLength(1);
    // Three more intervals pass while the first tick still runs: none starts beside it.
    await vi.advanceTimersByTimeAsync(3 * EVERY_MS);
    expect(ticks).toHaveLength(1);
    // runNow joins the tick in progress rather than starting another.
    const joined = p.runNow();
    expect(ticks).toHaveLength(1);
    ticks[0].resolve();
    await joined;
    await vi.advanceTimersByTimeAsync(EVERY_MS);
    expect(ticks).toHaveLength(2);
    ticks[1].resolve();
    await p.stop();
  });

  it('stop waits for the tick in progress, and no tick starts after it', async () => {
    const { log } = capturedLog();
    let started = 0;
    const running = deferred();
    const p = startPeriodic({
      name: 'test loop',
      everyMs: EVERY_MS,
      run: () => {
        started++;
        return running.promise;
      },
      log,
    });
    await vi.advanceTimersByTimeAsync(EVERY_MS);
    expect(started).toBe(1);
    let stopped = false;
    const stopping = p.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(5 * EVERY_MS);
    expect(stopped).toBe(false);
    running.resolve();
    await stopping;
    expect(stopped).toBe(true);
    await vi.advanceTimersByTimeAsync(5 * EVERY_MS);
    await p.runNow();
    expect(started).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('logs a failed tick by its code only, and the next tick still runs', async () => {
    const { log, lines } = capturedLog();
    const secret = 'postgres://admin:hunter2@db.internal/prod';
    let calls = 0;
    const p = startPeriodic({
      name: 'test loop',
      everyMs: EVERY_MS,
      run: async () => {
        calls++;
        if (calls === 1)
          throw Object.assign(new Error(`cannot connect to ${secret}`), { code: 'ECONNREFUSED' });
      },
      log,
    });
    await vi.advanceTimersByTimeAsync(EVERY_MS);
    await settle();
    expect(calls).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      msg: 'test loop failed',
      errCode: 'ECONNREFUSED',
      errName: 'Error',
    });
    expect(JSON.stringify(lines)).not.toContain('hunter2');
    await vi.advanceTimersByTimeAsync(EVERY_MS);
    expect(calls).toBe(2);
    expect(lines).toHaveLength(1);
    // A handler that throws before returning a promise is caught the same way.
    const q = startPeriodic({
      name: 'sync loop',
      everyMs: EVERY_MS,
      run: () => {
        throw new TypeError('not a function');
      },
      log,
    });
    await q.runNow();
    await q.runNow();
    expect(lines.map((l) => l.msg)).toEqual(['test loop failed', 'sync loop failed', 'sync loop failed']);
    await Promise.all([p.stop(), q.stop()]);
  });
});
