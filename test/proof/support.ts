import { expect } from 'vitest';
import { type Call, ok } from '../pipelines/support';

/** Starts an observation (202) and polls it until it has finished; answers the finished one. */
export async function observeUntilDone(call: Call, ds: string, body: Record<string, unknown>) {
  const started = await ok(call('POST', `${ds}/proof-observations`, body), 202);
  expect(started).toMatchObject({ state: 'running', digest: null, observed_at: null });
  for (let i = 0; i < 600; i++) {
    const o = await ok(call('GET', `${ds}/proof-observations/${started.slug}`), 200);
    if (o.state !== 'running') return o;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`observation ${started.slug} did not finish`);
}
