import { afterEach, describe, expect, it } from 'vitest';
import type { Ports } from './ports';
import {
  collectSink,
  edges,
  type Harness,
  harness,
  memoryPorts,
  rowsSource,
  sink,
  sleep,
  source,
} from './test-support';

// The SinkOpener port: every sink step's session is asked for at the run's start, before its
// source has answered, and whatever was opened is released once, on every path.

let h: Harness | null = null;
afterEach(async () => {
  await h?.cleanup();
  h = null;
});

type Trace = { opened: string[]; released: string[]; sourceAnsweredAfterOpen: boolean };

function withOpener(ports: Ports, trace: Trace, fail: Set<string> = new Set()): Ports {
  return {
    ...ports,
    sinkOpener: {
      async openSink(ctx) {
        trace.opened.push(ctx.step.slug);
        if (fail.has(ctx.step.slug)) throw new Error('cannot open');
        return { release: async () => void trace.released.push(ctx.step.slug) };
      },
    },
  };
}

const twoSinks = {
  steps: [source('orders'), sink('left'), sink('right')],
  edges: edges(['orders', 'left'], ['orders', 'right']),
};

describe('sink sessions opened at the run start', () => {
  it('asks for every sink before the source answers and releases each once after a run that succeeded', async () => {
    const trace: Trace = { opened: [], released: [], sourceAnsweredAfterOpen: false };
    const into: unknown[][] = [];
    const ports = memoryPorts(
      {
        orders: async () => {
          trace.sourceAnsweredAfterOpen = trace.opened.length === 2;
          return rowsSource(['id:int'], [[[1], [2]]])();
        },
      },
      { left: collectSink(into), right: collectSink([]) },
    );
    h = await harness(twoSinks, withOpener(ports, trace));
    await h.run();
    expect(trace.sourceAnsweredAfterOpen).toBe(true);
    expect(trace.opened.sort()).toEqual(['left', 'right']);
    expect(trace.released.sort()).toEqual(['left', 'right']);
    expect(into).toEqual([[1], [2]]);
  });

  it('releases them when the source fails, when the run is canceled, and skips a failed opening', async () => {
    const failed: Trace = { opened: [], released: [], sourceAnsweredAfterOpen: false };
    const failing = memoryPorts(
      {
        orders: async () => {
          throw new Error('source broke');
        },
      },
      { left: collectSink([]), right: collectSink([]) },
    );
    h = await harness(twoSinks, withOpener(failing, failed, new Set(['right'])));
    await expect(h.run()).rejects.toMatchObject({ code: 'STEP_FAILED' });
    expect(failed.opened.sort()).toEqual(['left', 'right']);
    // The opening that failed has nothing to release; the other is released once.
    expect(failed.released).toEqual(['left']);
    expect(h.final('left')?.state).toBe('skipped');
    await h.cleanup();

    const canceled: Trace = { opened: [], released: [], sourceAnsweredAfterOpen: false };
    const cancel = new AbortController();
    const waiting = memoryPorts(
      {
        orders: (ctx) =>
          new Promise((_, reject) => {
            ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
          }),
      },
      { left: collectSink([]), right: collectSink([]) },
    );
    h = await harness(twoSinks, withOpener(waiting, canceled));
    const run = h.run({ signal: cancel.signal });
    await sleep(20);
    cancel.abort();
    await expect(run).rejects.toMatchObject({ code: 'CANCELED' });
    expect(canceled.released.sort()).toEqual(['left', 'right']);
  });
});
