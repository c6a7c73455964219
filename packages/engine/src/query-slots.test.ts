import { describe, expect, it } from 'vitest';
import { Canceled } from './meter';
import { poolSize, QUERY_SLOTS, querySlot, querySlots } from './query-slots';

// A process runs at most two transform queries fewer than libuv's pool has threads
// (query-slots.ts; docs/pipeline-spec.md).

describe('query slots', () => {
  it('are the pool size less two, handed on in order, and given back once', async () => {
    expect(QUERY_SLOTS).toBe(Math.max(1, poolSize(process.env.UV_THREADPOOL_SIZE) - 2));
    const signal = new AbortController().signal;
    const held = await Promise.all(Array.from({ length: QUERY_SLOTS }, () => querySlot(signal)));
    expect(querySlots()).toEqual({ free: 0, waiting: 0 });
    const order: number[] = [];
    const later = [1, 2].map((k) =>
      querySlot(signal).then((r) => {
        order.push(k);
        return r;
      }),
    );
    await new Promise((r) => setImmediate(r));
    expect(querySlots()).toEqual({ free: 0, waiting: 2 });
    held[0]();
    held[0]();
    const first = await later[0];
    expect(order).toEqual([1]);
    held[1]?.();
    first();
    (await later[1])();
    for (const r of held.slice(2)) r();
    expect(querySlots()).toEqual({ free: QUERY_SLOTS, waiting: 0 });
  });

  it('read UV_THREADPOOL_SIZE as libuv does', () => {
    expect([undefined, '8', ' 16', '0', 'many', '2000', '-3', '12abc'].map(poolSize)).toEqual([
      4, 8, 16, 1, 1, 1024, 1024, 12,
    ]);
  });

  it('stops waiting when the run is canceled', async () => {
    const ac = new AbortController();
    const held = await Promise.all(Array.from({ length: QUERY_SLOTS }, () => querySlot(ac.signal)));
    const waiting = querySlot(ac.signal);
    ac.abort();
    await expect(waiting).rejects.toBeInstanceOf(Canceled);
    expect(querySlots()).toEqual({ free: 0, waiting: 0 });
    for (const r of held) r();
    await expect(querySlot(ac.signal)).rejects.toBeInstanceOf(Canceled);
    expect(querySlots()).toEqual({ free: QUERY_SLOTS, waiting: 0 });
  });
});
