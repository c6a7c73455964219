import { z } from 'zod';
import { allowPrivateHostsField, httpUrlField } from '../fields';
import { forgeSourceOperation } from '../gitforge/source';
import { gitSinkOperation, statementSchema } from '../gitforge/statements';

export const gitlabConfigSchema = z
  .object({
    project: z
      .string()
      .min(1)
      .max(1024)
      .regex(/^([A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)+|\d+)$/, '`group/project` path or numeric project id')
      .describe('Project path (`group/subgroup/project`) or numeric id.'),
    base_url: httpUrlField('URL of a self-managed GitLab instance (default https://gitlab.com).').default(
      'https://gitlab.com',
    ),
    default_branch: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe('Branch used when a statement names none.'),
    allow_private_hosts: allowPrivateHostsField,
  })
  .strict()
  .describe('GitLab connector configuration. It connects through OAuth, so it takes no static credentials.');

/** The collections a GitLab data source reads as rows (object_rows). */
export const gitlabObjects = ['issues', 'merge_requests'] as const;

export const gitlabStatementSchema = statementSchema('gitlab');
export const gitlabSourceOperation = forgeSourceOperation(gitlabObjects);
export const gitlabSinkOperation = gitSinkOperation;
