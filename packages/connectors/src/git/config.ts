import { z } from 'zod';
import { allowPrivateHostsField, secretField } from '../fields';

// The git connector's shapes (service-api.md "Git connector"): HTTPS or SSH remotes only
// (plain http:// is refused), a statement for saved queries and the pipeline operation.

const SCP_LIKE = /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!\/\/)[^\s]+$/;

export const gitConfigSchema = z
  .object({
    repo_url: z
      .string()
      .min(1)
      .max(2048)
      .refine((v) => {
        if (SCP_LIKE.test(v)) return true;
        try {
          const u = new URL(v);
          return (u.protocol === 'https:' || u.protocol === 'ssh:') && u.hostname !== '' && u.password === '';
        } catch {
          return false;
        }
      }, 'must be an https:// or ssh:// URL (or user@host:path); plain HTTP is not supported and credentials do not belong in the URL')
      .describe('Repository URL: `https://…`, `ssh://…` or `user@host:path`.'),
    default_branch: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe('Branch used when a statement names none.'),
    base_path: z
      .string()
      .max(1024)
      .optional()
      .describe('Directory inside the repository that paths are relative to.'),
    allow_private_hosts: allowPrivateHostsField,
  })
  .strict()
  .describe('Git connector configuration.');

export const gitCredentialsSchema = z
  .discriminatedUnion('auth_type', [
    z
      .object({
        auth_type: z.literal('https').describe('Authenticate over HTTPS.'),
        username: z.string().min(1).max(1024).optional().describe('HTTPS user name (some hosts accept any).'),
        token: secretField('HTTPS password or access token.').optional(),
      })
      .strict(),
    z
      .object({
        auth_type: z.literal('ssh').describe('Authenticate over SSH with a key.'),
        ssh_private_key: secretField('SSH private key (PEM/OpenSSH format).').regex(
          /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
          'must be a PEM or OpenSSH private key',
        ),
        ssh_passphrase: secretField('Passphrase of the private key.').optional(),
        ssh_known_hosts: z
          .string()
          .min(1)
          .max(65_536)
          .describe('known_hosts lines that pin the server host key (required for SSH).'),
      })
      .strict(),
  ])
  .describe('Git credentials by auth_type (https or ssh). Write-only.');

export type GitConfig = z.infer<typeof gitConfigSchema>;
export type GitCredentials = z.infer<typeof gitCredentialsSchema>;

const formatField = z
  .enum(['auto', 'csv', 'json', 'jsonl', 'file'])
  .default('auto')
  .describe(
    'How the file is read or written: `auto` goes by the extension (.csv, .tsv, .json, .jsonl/.ndjson; anything else is a raw file).',
  );
const pathField = z
  .string()
  .min(1)
  .max(1024)
  .describe('File path relative to base_path; `{{name}}` placeholders allowed.');
const refField = z
  .string()
  .min(1)
  .max(255)
  .describe('Branch name or full commit id to read; default_branch (or the remote HEAD) when absent.');
const branchField = z
  .string()
  .min(1)
  .max(255)
  .describe(
    'Branch to commit to; default_branch (or the remote HEAD) when absent. A missing branch is created.',
  );
const messageField = z.string().min(1).max(10_000).describe('Commit message.');
const delimiterField = z.string().length(1).describe('CSV delimiter (default `,`, `\t` for .tsv).');
const hasHeaderField = z.boolean().default(true).describe('The CSV file starts with a header row.');

export const gitStatementSchema = z
  .object({
    type: z.literal('git'),
    operation: z
      .enum(['read', 'write', 'list_branches'])
      .default('read')
      .describe('`read` a file, `write` a file as a commit, or `list_branches`.'),
    path: pathField.optional(),
    ref: refField.optional(),
    branch: branchField.optional(),
    format: formatField,
    delimiter: delimiterField.optional(),
    has_header: hasHeaderField,
    records_path: z.string().max(500).optional().describe('Dotted path to the records of a JSON file.'),
    content: z
      .union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())])
      .optional()
      .describe('What `write` commits: text as is, objects and arrays as JSON (or CSV for a .csv path).'),
    message: messageField.optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.operation !== 'list_branches' && !s.path)
      ctx.addIssue({ code: 'custom', path: ['path'], message: `${s.operation} needs a path` });
    if (s.operation === 'write' && s.content === undefined)
      ctx.addIssue({ code: 'custom', path: ['content'], message: 'write needs content' });
  })
  .describe(
    'A git statement: read a file at a branch or commit, write a file as a commit, or list branches.',
  );
export type GitStatement = z.infer<typeof gitStatementSchema>;

/** `operation_type: git` of a pipeline step (checked here, the engine leaves it to us). */
export const gitOperationSchema = z
  .object({
    operation_type: z.literal('git'),
    path: pathField,
    ref: refField.optional(),
    branch: branchField.optional(),
    format: formatField,
    delimiter: delimiterField.optional(),
    has_header: hasHeaderField,
    records_path: z.string().max(500).optional(),
    message: messageField.optional(),
  })
  .strict();
export type GitOperation = z.infer<typeof gitOperationSchema>;
