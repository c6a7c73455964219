// Data contracts (docs/drift-and-contracts.md).

export type Contract = {
  slug: string;
  name: string;
  description: string | null;
  target: { pipeline_slug: string; step_slug: string };
  latest_revision_slug: string | null;
  created_at: string;
  updated_at: string;
};
export type Column = { name: string; type: string; nullable: boolean; unique: boolean; primary_key: boolean };
export type Rule = Record<string, unknown> & { metric: string };
export type Revision = {
  slug: string;
  based_on: string | null;
  compatibility: 'backward' | 'none';
  columns: Column[];
  quality: Rule[];
  freshness: { column: string; max_latency_seconds: number } | null;
  digest: string;
  created_at: string;
};
export type Search = { project?: string; cursor?: string; direction?: string };

export const linkClass = 'text-blue-700 hover:underline dark:text-blue-300';
