import type { Command } from 'commander';
import { action, cols, confirmQuery, listAction, withConfirm } from '../resource';

const LIST = '/organizations/{organization}/environments';
const ITEM = '/organizations/{organization}/environments/{environment}';
const PROJECT_ENVS = '/organizations/{organization}/projects/{project}/environments';
const ENABLED = '/organizations/{organization}/projects/{project}/environments/{environment}';
const FIELDS = ['name', 'slug', 'description', 'color'];

export function environmentsCommand(program: Command) {
  const noun = program
    .command('environments')
    .description('Manage environments (organization-wide) and enable them for projects');
  const columns = cols('slug', 'name', 'protected', 'run_timeout_seconds', 'deleted_at', 'created_at');
  listAction(noun, 'org', {
    description: 'List environments',
    path: LIST,
    key: 'environments',
    columns,
    filters: [
      { flag: 'include-deleted', query: 'include_deleted', description: 'true to list deleted ones too' },
    ],
  });
  listAction(noun, 'project', {
    name: 'list-enabled',
    description: 'List the environments enabled for a project',
    path: PROJECT_ENVS,
    key: 'environments',
    columns: cols('slug', 'name', 'is_default', 'protected'),
  });
  action(noun, 'org', {
    name: 'get',
    args: ['<environment>'],
    description: 'Show an environment',
    method: 'GET',
    path: ITEM,
  });
  action(noun, 'org', {
    name: 'create',
    description: 'Create an environment (--set protected=true, --set run_timeout_seconds=600)',
    method: 'POST',
    path: LIST,
    body: FIELDS,
  });
  action(noun, 'org', {
    name: 'update',
    args: ['<environment>'],
    description: 'Change an environment',
    method: 'PATCH',
    path: ITEM,
    body: ['name', 'description', 'color'],
    options: withConfirm,
    query: confirmQuery,
  });
  action(noun, 'org', {
    name: 'delete',
    args: ['<environment>'],
    description: 'Delete an environment (soft; restore or purge later)',
    method: 'DELETE',
    path: ITEM,
    options: (c) => withConfirm(c).option('--reason <text>', 'why it is deleted'),
    query: (o) => ({ ...confirmQuery(o), ...(o.reason ? { delete_reason: o.reason } : {}) }),
  });
  action(noun, 'org', {
    name: 'restore',
    args: ['<environment>'],
    description: 'Restore a deleted environment',
    method: 'POST',
    path: '/organizations/{organization}/environments/{environment}:restore',
  });
  action(noun, 'org', {
    name: 'purge',
    args: ['<environment>'],
    description: 'Purge a deleted environment for good',
    method: 'POST',
    path: '/organizations/{organization}/environments/{environment}:purge',
    options: withConfirm,
    query: confirmQuery,
  });
  action(noun, 'env', {
    name: 'enable',
    description: 'Enable an environment for a project (--default makes it the project default)',
    method: 'PUT',
    path: ENABLED,
    options: (c) => withConfirm(c).option('--default', "make it the project's default environment"),
    makeBody: async (o) => ({
      ...(o.default ? { is_default: true } : {}),
      ...(o.confirm ? { protected_environment_confirmation: o.confirm } : {}),
    }),
  });
  action(noun, 'env', {
    name: 'disable',
    description: 'Disable an environment for a project',
    method: 'DELETE',
    path: ENABLED,
    options: withConfirm,
    query: confirmQuery,
  });
}
