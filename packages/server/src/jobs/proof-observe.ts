import { z } from 'zod';
import type { Deps } from '../context';
import { runObservation } from '../modules/proof/index';
import { defineJob } from './define';
import type { JobHandler } from './queue';

const payload = z.object({ observationId: z.string().uuid() });

declare module './queue' {
  interface JobPayloads {
    'proof.observe': typeof payload;
  }
}

/** Checks every proof target of a data source at one commit (docs/proof.md). */
const observeProof =
  (deps: Deps): JobHandler<'proof.observe'> =>
  async ({ observationId }) =>
    runObservation(deps, observationId);

export const proofObserveJob = defineJob({
  name: 'proof.observe',
  payload,
  // Failures are recorded on the observation (state error); a retry only covers a lost worker.
  policy: { retry: { limit: 1, delaySeconds: 10, backoff: false }, expireInSeconds: 600 },
  handler: observeProof,
});
