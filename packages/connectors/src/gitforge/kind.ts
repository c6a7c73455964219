import type { ConnectorContext, ProofCheck } from '../types';
import type { ObjectKind } from './statements';
import type { ForgeAuth } from './transport';

// What makes a hosted forge kind (github, gitlab): its name and object collections, and the
// vendor SDK calls its own client.ts provides as a ForgeClient. Everything else the two kinds
// share lives in this folder (docs/architecture.md "The floor plan").

export type ForgeFile = { body: AsyncIterable<Uint8Array>; size: number | null };

export type ForgeClient = {
  /** Proves the token and the repository; answers the default branch. */
  repository(): Promise<{ defaultBranch: string }>;
  branches(): Promise<string[]>;
  files(ref: string): Promise<{ path: string; size: number | null }[]>;
  readFile(path: string, ref: string): Promise<ForgeFile>;
  commitFile(o: {
    path: string;
    branch: string;
    content: Buffer;
    message: string;
  }): Promise<{ commit: string | null }>;
  /** Normalized rows (objectColumns order), page by page, following the provider's paging. */
  objects(kind: ObjectKind, state: 'open' | 'closed' | 'all'): AsyncIterable<unknown[][]>;
  /** Proof: the provider's immutable repository id. */
  repositoryId(): Promise<string>;
  /** Proof: the commit a branch or commit id names, with its tree. */
  commit(ref: string): Promise<{ sha: string; treeSha: string | null }>;
  /** Proof: creates or updates the named check (a commit status) on the commit. */
  publishCheck(check: ProofCheck): Promise<void>;
};

export type ForgeKind = {
  type: 'github' | 'gitlab';
  label: string;
  objects: readonly ObjectKind[];
  client(config: Record<string, unknown>, auth: ForgeAuth, ctx: ConnectorContext): Promise<ForgeClient>;
};

/** The core both kinds declare alike: OAuth tokens (no static credentials) sent to `base_url`. */
export const forgeCore = {
  credentialsSchema: null,
  credentialDestination: ['base_url'],
  credentialsRequired: false,
  defaultReadOnly: false,
} as const;
