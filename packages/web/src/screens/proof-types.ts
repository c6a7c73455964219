// Proof for git, github and gitlab data sources (docs/proof.md): settings with their targets,
// observations at commits, and signed receipts.

export type Target = { kind: 'path' | 'pipeline' | 'contract'; ref: string };
export type Settings = {
  enabled: boolean;
  publish_checks: boolean;
  expected_repository_id: string | null;
  targets: Target[];
  /** Null before the first save: the answer is then the defaults in force. */
  created_at?: string | null;
  updated_at?: string | null;
};
export type Finding = { severity: string; code: string; message: string; path: string | null };
export type TargetResult = Target & {
  result: 'pass' | 'warn' | 'fail' | 'error';
  files: string[];
  findings: Finding[];
};
export type Observation = {
  slug: string;
  candidate_slug: string | null;
  repository_id: string | null;
  commit_sha: string | null;
  state: 'running' | 'passed' | 'warned' | 'failed' | 'error';
  targets: TargetResult[];
  inputs: { path: string; sha256: string; size: number }[];
  error: { code: string; message: string } | null;
  digest: string | null;
  observed_at: string | null;
  created_at: string;
};
export type Receipt = {
  slug: string;
  data_source_slug: string;
  candidate_slug: string;
  sequence: number;
  verdict: 'PASSED' | 'WARNED' | 'FAILED';
  observation_slugs: string[];
  digest: string;
  prev_receipt_digest: string | null;
  envelope: { payloadType: string; payload: string; signatures: { keyid: string; sig: string }[] };
  check: { name: string; conclusion: string; published: boolean; error: string | null } | null;
  compiled_at: string;
};

export const tone = (s: string) =>
  ['passed', 'pass', 'PASSED'].includes(s)
    ? 'green'
    : ['warned', 'warn', 'WARNED', 'running'].includes(s)
      ? 'amber'
      : ('red' as const);
export const linkClass = 'text-blue-700 hover:underline dark:text-blue-300';
export const short = (sha: string | null) => (sha ? sha.slice(0, 12) : '—');
