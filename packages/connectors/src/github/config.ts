import { z } from 'zod';
import { allowPrivateHostsField, httpUrlField } from '../fields';
import { forgeSourceOperation } from '../gitforge/source';
import { gitSinkOperation, statementSchema } from '../gitforge/statements';

export const name = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, `_`, `.` and `-`');

export const githubConfigSchema = z
  .object({
    owner: name.describe('User or organization that owns the repository.'),
    repo: name.describe('Repository name.'),
    base_url: httpUrlField(
      'API URL of a GitHub Enterprise Server (default https://api.github.com).',
    ).optional(),
    default_branch: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe('Branch used when a statement names none.'),
    allow_private_hosts: allowPrivateHostsField,
  })
  .strict()
  .describe('GitHub connector configuration. It connects through OAuth, so it takes no static credentials.');

/** The collections a GitHub data source reads as rows (object_rows). */
export const githubObjects = ['issues', 'pull_requests'] as const;

export const githubStatementSchema = statementSchema('github');
export const githubSourceOperation = forgeSourceOperation(githubObjects);
export const githubSinkOperation = gitSinkOperation;
