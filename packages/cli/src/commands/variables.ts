import type { Command } from 'commander';
import { action, cols, confirmQuery, listAction, withConfirm } from '../resource';

const LIST = '/organizations/{organization}/environments/{environment}/variables';
const ITEM = '/organizations/{organization}/environments/{environment}/variables/{runtime_variable_key}';

export function variablesCommand(program: Command) {
  const noun = program.command('variables').description('Manage runtime variables of an environment');
  listAction(noun, 'orgEnv', {
    description: 'List the runtime variables of an environment',
    path: LIST,
    key: 'runtime_variables',
    columns: cols('key', 'value', 'description', 'updated_at'),
  });
  action(noun, 'orgEnv', {
    name: 'get',
    args: ['<key>'],
    description: 'Show a variable',
    method: 'GET',
    path: ITEM,
  });
  action(noun, 'orgEnv', {
    name: 'set',
    args: ['<key>', '<value>'],
    description: 'Create or replace a variable (not secret: use secrets for credentials)',
    method: 'PUT',
    path: ITEM,
    options: (c) => withConfirm(c).option('--description <text>', 'what the variable is for'),
    makeBody: async (o, args) => ({
      value: args[1],
      ...(o.description !== undefined ? { description: o.description } : {}),
      ...(o.confirm ? { protected_environment_confirmation: o.confirm } : {}),
    }),
  });
  action(noun, 'orgEnv', {
    name: 'delete',
    args: ['<key>'],
    description: 'Delete a variable',
    method: 'DELETE',
    path: ITEM,
    options: withConfirm,
    query: confirmQuery,
  });
}
