import { forgeProof } from '../gitforge/proof';
import { githubForge } from './client';

/** Proof observations and commit checks (docs/proof.md) through GitHub's API. */
export const githubProof = forgeProof(githubForge);
