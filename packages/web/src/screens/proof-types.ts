// Proof for git, github and gitlab data sources (docs/proof.md): settings with their targets,
// observations at commits, and signed receipts.

export type { Observation, Receipt } from '../lib/queries/proof';

import type { Observation, ProofSettings } from '../lib/queries/proof';

export type Settings = ProofSettings;
export type Target = Settings['targets'][number];
export type TargetResult = Observation['targets'][number];
export type Finding = TargetResult['findings'][number];

export const tone = (s: string) =>
  ['passed', 'pass', 'PASSED'].includes(s)
    ? 'green'
    : ['warned', 'warn', 'WARNED', 'running'].includes(s)
      ? 'amber'
      : ('red' as const);
export const linkClass = 'text-blue-700 hover:underline dark:text-blue-300';
export const short = (sha: string | null) => (sha ? sha.slice(0, 12) : '—');
