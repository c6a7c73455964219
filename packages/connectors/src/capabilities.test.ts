import { describe, expect, it } from 'vitest';
import { loadedBy, optionalCapability } from './capabilities';
import { connectors } from './registry';

describe('loadedBy', () => {
  it('starts every load at once and resolves once all have', async () => {
    const started: string[] = [];
    const release: (() => void)[] = [];
    const load = (name: string) => () =>
      new Promise<void>((resolve) => {
        started.push(name);
        release.push(resolve);
      });
    let done = false;
    const all = loadedBy(load('code'), load('library'))().then(() => {
      done = true;
    });
    expect(started).toEqual(['code', 'library']);
    release[0]();
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    release[1]();
    await all;
    expect(done).toBe(true);
  });

  it('rejects with the failure of a load', async () => {
    const failed = new Error('no such module');
    await expect(
      loadedBy(
        async () => {},
        async () => {
          throw failed;
        },
      )(),
    ).rejects.toBe(failed);
  });
});

// What a worker's warm start calls for each kind a deployed pipeline reads or writes
// (docs/operations.md#a-workers-warm-start): every kind's code must load here, on its own.
describe('every pipeline source and sink loads its code', () => {
  for (const def of connectors) {
    for (const role of ['source', 'sink'] as const) {
      const capability = optionalCapability(def, role);
      if (!capability) continue;
      it(`${def.type} ${role}`, async () => {
        await expect(capability.load()).resolves.toBeUndefined();
      }, 30_000);
    }
  }
});
