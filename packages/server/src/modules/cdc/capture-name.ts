import { createHash } from 'node:crypto';

// The name of a change data capture (docs/cdc.md): one per pipeline source step and
// environment. On PostgreSQL it names the replication slot and the publication, so it is a
// valid unquoted identifier of at most 63 characters: `sluice_` and 24 hex digits of a hash of
// what it belongs to. The same step in the same environment always gets the same name, across
// versions and deployments, so a redeploy keeps its position.

export const CAPTURE_PREFIX = 'sluice_';

export function captureName(pipelineId: string, environmentId: string, stepSlug: string): string {
  const digest = createHash('sha256').update(`${pipelineId}\n${environmentId}\n${stepSlug}`).digest('hex');
  return `${CAPTURE_PREFIX}${digest.slice(0, 24)}`;
}
