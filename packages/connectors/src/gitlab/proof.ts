import { forgeProof } from '../gitforge/proof';
import { gitlabForge } from './client';

/** Proof observations and commit checks (docs/proof.md) through GitLab's API. */
export const gitlabProof = forgeProof(gitlabForge);
