import { z } from 'zod';
import { serviceAccountJsonField } from '../fields';

// The statement of a saved query, and the fields of a pipeline step's `workspace_file`
// operation (the same fields without `type`).

export const googleId = (what: string) =>
  z
    .string()
    .min(1)
    .max(255)
    .regex(/^[A-Za-z0-9_-]+$/, 'the id from the document or folder URL')
    .describe(what);

export const workspaceOperations = [
  'read_range',
  'append_rows',
  'list_files',
  'read_file',
  'write_file',
] as const;

const fields = {
  operation: z
    .enum(workspaceOperations)
    .describe(
      '`read_range` and `append_rows` work on a spreadsheet range; `list_files`, `read_file` and `write_file` on Drive files.',
    ),
  spreadsheet_id: googleId('Spreadsheet; defaults to the data source `spreadsheet_id`.').optional(),
  range: z
    .string()
    .min(1)
    .max(500)
    .optional()
    .describe('A1 range: `Sheet1`, `Sheet1!A:F` or `Sheet1!A1:F500` (read_range, append_rows).'),
  has_header: z.boolean().default(true).describe('The range starts with a header row of column names.'),
  rows: z
    .union([z.string(), z.array(z.record(z.string(), z.unknown()))])
    .optional()
    .describe('append_rows: rows as objects, or `{{param}}` naming a parameter that holds them.'),
  value_input_option: z
    .enum(['RAW', 'USER_ENTERED'])
    .default('RAW')
    .describe('append_rows: RAW stores values as given; USER_ENTERED parses them like typed input.'),
  folder_id: googleId('Drive folder; defaults to the data source `drive_folder_id`.').optional(),
  file_id: googleId('read_file: the file; write_file: the file to replace (omit to create one).').optional(),
  name: z.string().min(1).max(255).optional().describe('write_file: name of a new file (templates allowed).'),
  mime_type: z
    .string()
    .min(3)
    .max(255)
    .regex(/^[\w.+-]+\/[\w.+-]+$/)
    .optional()
    .describe('write_file: media type of the content (default from the payload, else text/plain).'),
  content: z
    .union([
      z.string().max(10_000_000),
      z.array(z.record(z.string(), z.unknown())),
      z.record(z.string(), z.unknown()),
    ])
    .optional()
    .describe('write_file in a saved query: text, or JSON (objects are written as JSON).'),
};

function requireFields(
  v: {
    operation: string;
    range?: string;
    rows?: unknown;
    file_id?: string;
    name?: string;
    content?: unknown;
  },
  ctx: z.RefinementCtx,
  needContent: boolean,
) {
  const need = (field: string, ok: boolean) => {
    if (!ok) ctx.addIssue({ code: 'custom', path: [field], message: `${v.operation} needs ${field}` });
  };
  if (v.operation === 'read_range' || v.operation === 'append_rows') need('range', v.range !== undefined);
  if (v.operation === 'append_rows' && needContent) need('rows', v.rows !== undefined);
  if (v.operation === 'read_file') need('file_id', v.file_id !== undefined);
  if (v.operation === 'write_file') {
    need('name or file_id', v.name !== undefined || v.file_id !== undefined);
    if (needContent) need('content', v.content !== undefined);
  }
}

export const googleWorkspaceStatementSchema = z
  .object({ type: z.literal('google_workspace').describe('Statement type: `google_workspace`.'), ...fields })
  .strict()
  .superRefine((v, ctx) => requireFields(v, ctx, true))
  .describe('Google Workspace statement.');

/** A pipeline step's operation (`operation_type: workspace_file`); content comes from upstream. */
export const workspaceStepSchema = z
  .object({ operation_type: z.literal('workspace_file'), ...fields })
  .strict()
  .superRefine((v, ctx) => requireFields(v, ctx, false));

export type WorkspaceStatement = z.output<typeof googleWorkspaceStatementSchema>;
export type WorkspaceStep = z.output<typeof workspaceStepSchema>;

export const googleWorkspaceConfigSchema = z
  .object({
    spreadsheet_id: googleId('Spreadsheet to read and write (the id in its URL).').optional(),
    drive_folder_id: googleId('Drive folder whose files are listed and read.').optional(),
  })
  .strict()
  .describe('Google Workspace connector configuration: a spreadsheet, a Drive folder, or both.');

export const googleWorkspaceCredentialsSchema = z
  .object({ service_account_json: serviceAccountJsonField })
  .strict()
  .describe('Google Workspace credentials: a service account the files are shared with. Write-only.');
