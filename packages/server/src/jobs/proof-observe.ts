import type { Deps } from '../context';
import { runObservation } from '../modules/proof/proof-observations.service';
import type { JobHandler } from './queue';

/** Checks every proof target of a data source at one commit (docs/proof.md). */
export const observeProof =
  (deps: Deps): JobHandler<'proof.observe'> =>
  async ({ observationId }) =>
    runObservation(deps, observationId);
