import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { RunError } from './executor';
import { rowsOf } from './rows-of';
import {
  collectSink,
  edges,
  harness,
  memoryPorts,
  rejection,
  rowsSource,
  sink,
  sleep,
  source,
  transform,
} from './test-support';

const rowBatches = (batches: number, size: number) =>
  (function* () {
    for (let b = 0; b < batches; b++)
      yield Array.from({ length: size }, (_, i) => {
        const id = b * size + i;
        return [id, `name-${id}`];
      });
  })();

describe('executeRun: flow', () => {
  it('streams a source straight into its only sink without buffering', async () => {
    let produced = 0;
    let maxLead = 0;
    const h = await harness(
      { steps: [source('orders'), sink('load')], edges: edges(['orders', 'load']) },
      memoryPorts(
        {
          orders: () => ({
            payload: {
              kind: 'rows',
              columns: [{ name: 'id', type: 'integer' }],
              batches: (async function* () {
                for (let b = 0; b < 50; b++) {
                  produced += 100;
                  yield Array.from({ length: 100 }, (_, i) => [b * 100 + i]);
                }
              })(),
            },
            nextCursor: async () => String(produced),
          }),
        },
        {
          load: async (input) => {
            let seen = 0;
            if (input.kind !== 'rows') throw new Error('rows expected');
            for await (const b of input.batches) {
              seen += b.length;
              maxLead = Math.max(maxLead, produced - seen);
            }
            return { rows: seen, bytes: 0 };
          },
        },
      ),
    );
    const out = await h.run({ cursors: { orders: '0' } });
    expect(out.cursors).toEqual({ orders: '5000' });
    expect(maxLead).toBeLessThanOrEqual(100); // one batch in flight, never the whole stream
    expect(h.final('orders')).toMatchObject({ state: 'succeeded', counters: { rows_out: 5000 } });
    expect(h.final('load')).toMatchObject({
      state: 'succeeded',
      counters: { rows_in: 5000, rows_out: 5000 },
    });
    expect(h.reports.filter((r) => r.step === 'load').map((r) => r.state)).toEqual(['running', 'succeeded']);
    await h.cleanup();
  });

  it('spools a payload read by two sinks and replays it to each, types intact', async () => {
    const when = new Date('2024-05-06T07:08:09.123Z');
    const rows = [
      [1, 'a', 9007199254740993n, when, new Uint8Array([1, 2, 255]), { nested: [1, 'x'] }],
      [2, null, 3n, null, null, [1, 2]],
    ];
    const got: Record<string, unknown[][]> = { left: [], right: [] };
    const h = await harness(
      {
        steps: [source('orders'), sink('left'), sink('right')],
        edges: edges(['orders', 'left'], ['orders', 'right']),
      },
      memoryPorts(
        {
          orders: rowsSource(
            ['id:int', 'name', 'big:bigint', 'at:timestamp', 'raw:bytea', 'doc:json'],
            [rows],
            'c-1',
          ),
        },
        { left: collectSink(got.left), right: collectSink(got.right) },
      ),
    );
    const out = await h.run();
    expect(out.cursors).toEqual({ orders: 'c-1' });
    expect(got.left).toEqual(rows);
    expect(got.right).toEqual(rows);
    expect((got.left[0][3] as Date).getTime()).toBe(when.getTime());
    expect(await readdir(`${h.tmpDir}/run`)).toContain('spool-orders.rows.ndjson');
    expect(h.final('orders')?.counters.rows_out).toBe(2);
    expect(h.final('right')).toMatchObject({ state: 'succeeded', counters: { rows_in: 2 } });
    await h.cleanup();
  });

  it('drains what a sink left unread so the source finishes and its cursor is known', async () => {
    const h = await harness(
      { steps: [source('orders'), sink('ping')], edges: edges(['orders', 'ping']) },
      memoryPorts(
        { orders: rowsSource(['id:int'], rowBatches(5, 10), 'end') },
        { ping: async () => ({ rows: 0, bytes: 0 }) },
      ),
    );
    expect((await h.run()).cursors).toEqual({ orders: 'end' });
    expect(h.final('orders')?.counters.rows_out).toBe(50);
    expect(h.final('ping')?.counters.rows_in).toBe(0);
    await h.cleanup();
  });
});

describe('executeRun: failures and cancellation', () => {
  it('fails on a sink error: the sink is failed, upstream canceled, no cursor returned', async () => {
    const h = await harness(
      {
        steps: [source('orders'), transform('clean', 'SELECT id FROM orders'), sink('load')],
        edges: edges(['orders', 'clean'], ['clean', 'load']),
      },
      memoryPorts(
        { orders: rowsSource(['id:int', 'name'], rowBatches(20, 100), 'next') },
        {
          load: async (input) => {
            const rows = await rowsOf(input);
            for await (const _ of rows.batches)
              throw Object.assign(new Error('relation "orders" does not exist'), { code: 'QUERY_FAILED' });
            return { rows: 0, bytes: 0 };
          },
        },
      ),
    );
    const err = await rejection(h.run());
    expect(err).toBeInstanceOf(RunError);
    expect(err).toMatchObject({ code: 'STEP_FAILED', step: 'load' });
    expect(err.message).toBe('step load: relation "orders" does not exist');
    expect(h.final('load')).toMatchObject({
      state: 'failed',
      error: { code: 'QUERY_FAILED', message: 'relation "orders" does not exist' },
    });
    expect(h.final('clean')?.state).toBe('canceled');
    expect(['succeeded', 'canceled']).toContain(h.final('orders')?.state);
    await h.cleanup();
  });

  it('skips the steps downstream of a failed source', async () => {
    const h = await harness(
      {
        steps: [source('orders'), transform('clean', 'SELECT * FROM orders'), sink('load')],
        edges: edges(['orders', 'clean'], ['clean', 'load']),
      },
      memoryPorts(
        {
          orders: async () => {
            throw new Error('connection refused');
          },
        },
        { load: collectSink([]) },
      ),
    );
    const err = await rejection(h.run());
    expect(err).toMatchObject({ code: 'STEP_FAILED', message: 'step orders: connection refused' });
    expect(h.final('orders')).toMatchObject({ state: 'failed', error: { code: 'STEP_FAILED' } });
    expect(h.final('clean')?.state).toBe('skipped');
    expect(h.final('load')?.state).toBe('skipped');
    expect(h.reports.some((r) => r.step === 'load' && r.state === 'running')).toBe(false);
    await h.cleanup();
  });

  it('cancels promptly while sources are producing, even ports that ignore the signal', async () => {
    const endless = () => ({
      payload: {
        kind: 'rows' as const,
        columns: [{ name: 'id', type: 'integer' }],
        batches: (async function* () {
          for (let i = 0; ; i++) {
            await sleep(5); // ignores the signal on purpose
            yield [[i]];
          }
        })(),
      },
      nextCursor: async () => null,
    });
    const h = await harness(
      {
        steps: [source('a'), sink('direct'), source('b'), transform('t', 'SELECT * FROM b'), sink('via')],
        edges: edges(['a', 'direct'], ['b', 't'], ['t', 'via']),
      },
      memoryPorts({ a: endless, b: endless }, { direct: collectSink([]), via: collectSink([]) }),
    );
    const ctl = new AbortController();
    const running = h.run({ signal: ctl.signal });
    await sleep(300);
    const t0 = Date.now();
    ctl.abort();
    const err = await rejection(running);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(err).toMatchObject({ code: 'CANCELED', message: 'the run was canceled' });
    for (const s of ['a', 'direct', 'b', 't', 'via']) expect(h.final(s)?.state).toBe('canceled');
    expect(h.reports.some((r) => r.step === 'via' && r.state === 'running')).toBe(false);
    expect(h.final('direct')!.counters.rows_in).toBeGreaterThan(0);
    await h.cleanup();
  });

  it('masks secret values in logs, reports and the run error', async () => {
    const secrets = ['s3cr3t-token-value', 's3cr3t'];
    const h = await harness(
      { steps: [source('orders'), sink('load')], edges: edges(['orders', 'load']) },
      memoryPorts(
        {
          orders: (ctx) => {
            ctx.log('info', 'calling with s3cr3t-token-value and s3cr3t');
            throw new Error('401 for token s3cr3t-token-value (s3cr3t)');
          },
        },
        { load: collectSink([]) },
      ),
    );
    const err = await rejection(h.run({ secretValues: secrets }));
    expect(err.message).toBe('step orders: 401 for token **** (****)');
    expect(h.final('orders')?.error?.message).toBe('401 for token **** (****)');
    const text = JSON.stringify([h.logs, h.reports]);
    expect(text).not.toContain('s3cr3t');
    expect(h.logs.map((l) => l.message)).toContain('calling with **** and ****');
    await h.cleanup();
  });
});

describe('executeRun: retrying a source that failed to open', () => {
  /** An error as a connector throws it: a code, and whether a retry can help. */
  const portError = (code: string, retryable: boolean) =>
    Object.assign(new Error(`${code} now`), { code, retryable });
  const spec = { steps: [source('orders'), sink('load')], edges: edges(['orders', 'load']) };

  /** A run whose source fails with `code` until its `opensOn`-th attempt (never, without it). */
  async function flaky(code: string, retryable: boolean, opensOn = Number.POSITIVE_INFINITY) {
    const state = { calls: 0, got: [] as unknown[][] };
    const h = await harness(
      spec,
      memoryPorts(
        {
          orders: () => {
            state.calls += 1;
            if (state.calls < opensOn) throw portError(code, retryable);
            return rowsSource(['id:int'], [[[1], [2]]])();
          },
        },
        { load: collectSink(state.got) },
      ),
    );
    return { h, state };
  }

  it('opens it again after a retryable failure, and logs each wait', async () => {
    const { h, state } = await flaky('CONNECTION_FAILED', true, 3);
    await h.run({ sourceRetry: { attempts: 3, delayMs: 5 } });
    expect(state.calls).toBe(3);
    expect(state.got).toEqual([[1], [2]]);
    expect(h.final('orders')?.state).toBe('succeeded');
    const waits = h.logs.filter((l) => l.level === 'warn' && l.step === 'orders').map((l) => l.message);
    expect(waits).toEqual([
      'CONNECTION_FAILED: CONNECTION_FAILED now; attempt 2 of 3 in 5 ms',
      'CONNECTION_FAILED: CONNECTION_FAILED now; attempt 3 of 3 in 10 ms',
    ]);
    await h.cleanup();
  });

  it('fails at once on a failure a retry cannot help', async () => {
    const { h, state } = await flaky('AUTHENTICATION_FAILED', false);
    const err = await rejection(h.run({ sourceRetry: { attempts: 3, delayMs: 5 } }));
    expect(state.calls).toBe(1);
    expect(err.code).toBe('STEP_FAILED');
    expect(h.final('orders')?.error?.code).toBe('AUTHENTICATION_FAILED');
    await h.cleanup();
  });

  it('gives up after the last attempt with the last failure', async () => {
    const { h, state } = await flaky('TIMEOUT', true);
    await rejection(h.run({ sourceRetry: { attempts: 2, delayMs: 5 } }));
    expect(state.calls).toBe(2);
    expect(h.final('orders')?.error).toEqual({ code: 'TIMEOUT', message: 'TIMEOUT now' });
    await h.cleanup();
  });
});
