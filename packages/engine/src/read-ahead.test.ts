import { describe, expect, it } from 'vitest';
import { readAhead } from './read-ahead';

const tick = () => new Promise((r) => setTimeout(r, 5));

/** A source of `n` chunks of `size` bytes that records how far it was pulled and whether it ended. */
function counted(n: number, size: number, failAt = -1) {
  const seen = { pulled: 0, finished: false };
  async function* gen() {
    try {
      for (let i = 0; i < n; i++) {
        if (i === failAt) throw new Error('the source failed');
        seen.pulled++;
        yield new Uint8Array(size).fill(i % 256);
      }
    } finally {
      seen.finished = true;
    }
  }
  return { seen, source: gen() };
}

describe('readAhead', () => {
  it('gives the same chunks in order, pulled ahead only up to its bound', async () => {
    const { seen, source } = counted(20, 10);
    const ahead = readAhead(source, 35);
    await tick();
    // Pulled before anything was asked for, and no further than the bound.
    expect(seen.pulled).toBe(4);
    const got: number[] = [];
    for await (const c of ahead) got.push(c[0]);
    expect(got).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(seen.finished).toBe(true);
  });

  it("gives the chunks before the source's failure, then the failure", async () => {
    const { source } = counted(10, 10, 3);
    const ahead = readAhead(source, 1000);
    await tick();
    const got: number[] = [];
    await expect(
      (async () => {
        for await (const c of ahead) got.push(c[0]);
      })(),
    ).rejects.toThrow('the source failed');
    expect(got).toEqual([0, 1, 2]);
  });

  it('stops pulling and ends the source when its consumer ends early', async () => {
    const { seen, source } = counted(100, 10);
    const ahead = readAhead(source, 30);
    for await (const c of ahead) if (c[0] === 1) break;
    await tick();
    expect(seen.finished).toBe(true);
    expect(seen.pulled).toBeLessThan(10);
  });

  it("ends early without waiting for the source's read in flight, and ends the source after it", async () => {
    let release: (() => void) | null = null;
    let finished = false;
    async function* stalled() {
      try {
        yield new Uint8Array(4).fill(1);
        // A body that stops arriving: this read returns only when released.
        await new Promise<void>((r) => {
          release = r;
        });
        yield new Uint8Array(4).fill(2);
        yield new Uint8Array(4).fill(3);
      } finally {
        finished = true;
      }
    }
    const ahead = readAhead(stalled(), 1000);
    const first = await ahead.next();
    expect(first.value?.[0]).toBe(1);
    await tick();
    expect(release).not.toBeNull();
    // The early end returns while the source's read is still pending.
    const ended = await Promise.race([
      ahead.return(undefined).then(() => 'returned'),
      tick().then(() => 'waited'),
    ]);
    expect(ended).toBe('returned');
    expect(finished).toBe(false);
    (release as unknown as () => void)();
    await tick();
    // The read returned: the pulling stopped there and ended the source.
    expect(finished).toBe(true);
  });

  it('ends at once on an empty source', async () => {
    const { source } = counted(0, 10);
    const got: Uint8Array[] = [];
    for await (const c of readAhead(source, 10)) got.push(c);
    expect(got).toEqual([]);
  });
});
