import { z } from 'zod';

// Statements (saved queries) and pipeline operations shared by the hosted git provider kinds
// (github, gitlab). Files and branches answer result type `git`; issues and pull/merge requests
// answer `object_rows`.

const path = z
  .string()
  .min(1)
  .max(1024)
  .refine(
    (p) => !p.startsWith('/') && !p.split('/').includes('..'),
    'a path inside the repository, without .. or a leading /',
  )
  .describe('File path inside the repository (placeholders allowed).');
const ref = z
  .string()
  .min(1)
  .max(255)
  .describe('Branch, tag or commit (default: the configured or default branch).');
const state = z.enum(['open', 'closed', 'all']).default('open').describe('Which items (default open).');
const maxRows = z.int().min(1).max(10_000_000).optional().describe('Stop after this many items.');

/** The object collections each kind exposes as rows. */
export type ObjectKind = 'issues' | 'pull_requests' | 'merge_requests';

export function statementSchema(type: 'github' | 'gitlab') {
  const requests = type === 'github' ? 'list_pull_requests' : 'list_merge_requests';
  return z
    .discriminatedUnion('operation', [
      z
        .object({ type: z.literal(type), operation: z.literal('read_file'), path, ref: ref.optional() })
        .strict(),
      z.object({ type: z.literal(type), operation: z.literal('list_branches') }).strict(),
      z.object({ type: z.literal(type), operation: z.literal('list_files'), ref: ref.optional() }).strict(),
      z
        .object({ type: z.literal(type), operation: z.literal('list_issues'), state, max_rows: maxRows })
        .strict(),
      z.object({ type: z.literal(type), operation: z.literal(requests), state, max_rows: maxRows }).strict(),
      z
        .object({
          type: z.literal(type),
          operation: z.literal('commit_file'),
          path,
          branch: ref.optional(),
          content: z
            .string()
            .max(10 * 1024 * 1024)
            .describe('New file content (text; placeholders allowed).'),
          message: z.string().min(1).max(10_000).describe('Commit message.'),
        })
        .strict(),
    ])
    .describe(
      `${type === 'github' ? 'GitHub' : 'GitLab'} statement: operation read_file, list_files, list_branches, list_issues, ${requests} or commit_file. {{name}} placeholders may appear in path, ref, branch, content and message.`,
    );
}

export type ForgeStatement =
  | { type: string; operation: 'read_file'; path: string; ref?: string }
  | { type: string; operation: 'list_branches' }
  | { type: string; operation: 'list_files'; ref?: string }
  | {
      type: string;
      operation: 'list_issues' | 'list_pull_requests' | 'list_merge_requests';
      state: 'open' | 'closed' | 'all';
      max_rows?: number;
    }
  | {
      type: string;
      operation: 'commit_file';
      path: string;
      branch?: string;
      content: string;
      message: string;
    };

const format = z
  .enum(['auto', 'csv', 'json', 'file'])
  .default('auto')
  .describe('auto: by extension (.csv/.tsv CSV, .json/.ndjson/.jsonl JSON, others a file).');

export const gitSourceOperation = z
  .object({
    operation_type: z.literal('git'),
    path,
    ref: ref.optional(),
    format,
  })
  .strict();

export const gitSinkOperation = z
  .object({
    operation_type: z.literal('git'),
    path,
    branch: ref.optional().describe('Branch to commit to (default: the configured or default branch).'),
    message: z.string().min(1).max(10_000).optional().describe('Commit message (default names the run).'),
    format,
  })
  .strict();

export const objectRowsOperation = (objects: readonly ObjectKind[]) =>
  z
    .object({
      operation_type: z.literal('object_rows'),
      object: z.enum(objects as [ObjectKind, ...ObjectKind[]]).describe('Which objects to read.'),
      state,
      max_rows: maxRows,
    })
    .strict();

/** Columns of the object collections, the same for both providers. */
export const objectColumns: Record<ObjectKind, { name: string; type: string }[]> = {
  issues: [
    { name: 'number', type: 'bigint' },
    { name: 'title', type: 'text' },
    { name: 'state', type: 'text' },
    { name: 'author', type: 'text' },
    { name: 'labels', type: 'text' },
    { name: 'comments', type: 'integer' },
    { name: 'created_at', type: 'timestamptz' },
    { name: 'updated_at', type: 'timestamptz' },
    { name: 'closed_at', type: 'timestamptz' },
    { name: 'url', type: 'text' },
  ],
  pull_requests: [
    { name: 'number', type: 'bigint' },
    { name: 'title', type: 'text' },
    { name: 'state', type: 'text' },
    { name: 'author', type: 'text' },
    { name: 'draft', type: 'boolean' },
    { name: 'source_branch', type: 'text' },
    { name: 'target_branch', type: 'text' },
    { name: 'created_at', type: 'timestamptz' },
    { name: 'updated_at', type: 'timestamptz' },
    { name: 'closed_at', type: 'timestamptz' },
    { name: 'merged_at', type: 'timestamptz' },
    { name: 'url', type: 'text' },
  ],
  merge_requests: [],
};
objectColumns.merge_requests = objectColumns.pull_requests;

/** `{{name}}` in a statement string: the parameter's text (statements have no other templates). */
export function fillPlaceholders(text: string, parameters: Record<string, unknown>): string {
  return text.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (m, name: string) =>
    name in parameters ? String(parameters[name] ?? '') : m,
  );
}
