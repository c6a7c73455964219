import type { SluiceClient } from '@sluice/client';

// What `sluice apply` knows about a kind of resource. The engine knows none of them by name: it
// reads `kind:` from each document, finds the kind in the registry (kinds.ts) and calls these.

/** One document of an apply file, after ${VAR} substitution; `kind` names its ResourceKind. */
export type Doc = Record<string, unknown> & { kind: string };

export type ApplyContext = {
  client: SluiceClient;
  org: string;
  /** process.env plus SLUICE_BASE_URL, SLUICE_TOKEN and SLUICE_ORG as the CLI resolved them. */
  env: Record<string, string | undefined>;
  /** The directory of the file a document came from (for spec_file and similar). */
  dir: string;
  /** True on --dry-run: read only. */
  dryRun: boolean;
  /** What was planned so far in this apply, by `Kind:key` (later kinds may depend on it). */
  planned?: Map<string, Change>;
  /**
   * The spec hash of each pipeline's files, by `project/pipeline`: from the draft validation
   * before anything is written, or from the push. Deployments deploy exactly this hash.
   */
  specHashes?: Map<string, string>;
};

/** One finding of a validation, as the API reports it. */
export type Finding = { severity: string; code: string; path: string; message: string };

/** Why a resource refuses the whole apply before anything is written. */
export type Refusal = { kind: string; key: string; reason: string; findings: Finding[] };

export type Change = { action: 'create' | 'update' | 'unchanged'; changes: string[] };

export type ResourceKind = {
  /** The `kind:` value, e.g. `Project`. */
  kind: string;
  /** Applied in ascending order and pruned in descending order, so dependencies come first. */
  order: number;
  /** Checks the document's shape; returns a message per problem (empty when fine). */
  check(doc: Doc): string[];
  /** The identity of the resource within the organization, e.g. `shop/orders-sync`. */
  key(doc: Doc): string;
  /** Extra documents this one stands for (a pipeline's bindings and deployments). */
  expand?(doc: Doc): Doc[];
  /**
   * Checks against the server before anything is written (a deployment validates the files'
   * spec there); any refusal stops the apply, on --dry-run too.
   */
  precheck?(ctx: ApplyContext, doc: Doc): Promise<Refusal[]>;
  /** What applying would do, from the resource's current state. */
  plan(ctx: ApplyContext, doc: Doc): Promise<Change>;
  /** Makes the resource match the document (only called when plan said create or update). */
  apply(ctx: ApplyContext, doc: Doc, change: Change): Promise<void>;
  /** Deletes a resource previously applied and no longer named (--prune); absent = never pruned. */
  remove?(ctx: ApplyContext, key: string): Promise<void>;
};
