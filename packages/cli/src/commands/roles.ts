import type { Command } from 'commander';
import { withApiOptions } from '../api';
import { printJson, printTable } from '../io';
import { action, call, clientOf, cols, listAction, type Row } from '../resource';

const LIST = '/organizations/{organization}/roles';
const ITEM = '/organizations/{organization}/roles/{role_slug}';

export function rolesCommand(program: Command) {
  const noun = program.command('roles').description('Manage custom roles and list permissions');
  listAction(noun, 'org', {
    description: 'List roles',
    path: LIST,
    key: 'roles',
    columns: cols('slug', 'name', 'built_in', 'permissions'),
  });
  action(noun, 'org', {
    name: 'get',
    args: ['<role>'],
    description: 'Show a role',
    method: 'GET',
    path: ITEM,
  });
  action(noun, 'org', {
    name: 'create',
    description: 'Create a role (--set permissions=\'["projects.read"]\' or --file)',
    method: 'POST',
    path: LIST,
    body: ['name', 'slug', 'description'],
  });
  action(noun, 'org', {
    name: 'update',
    args: ['<role>'],
    description: 'Change a role',
    method: 'PATCH',
    path: ITEM,
    body: ['name', 'description'],
  });
  action(noun, 'org', {
    name: 'delete',
    args: ['<role>'],
    description: 'Delete a role',
    method: 'DELETE',
    path: ITEM,
  });
  withApiOptions(noun.command('permissions').description('List every permission a role can hold')).action(
    async (opts) => {
      const { data } = await call<{ permissions: Row[] }>(await clientOf(opts), 'GET', '/permissions');
      if (opts.json) return printJson(data);
      printTable(data.permissions, cols('name', 'description'));
    },
  );
}
