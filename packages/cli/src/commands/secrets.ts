import type { Command } from 'commander';
import { CliError, ExitCode } from '../exit';
import { readStdin } from '../io';
import { action, cols, confirmQuery, listAction, withConfirm } from '../resource';

const LIST = '/organizations/{organization}/environments/{environment}/secrets';
const ITEM = '/organizations/{organization}/environments/{environment}/secrets/{environment_secret_key}';

/** The value of a secret comes from standard input only, never a flag (shell history, ps). */
async function secretValue(): Promise<string> {
  const value = (await readStdin()).replace(/\r?\n$/, '');
  if (!value)
    throw new CliError(ExitCode.failed, 'the secret value is read from standard input, which was empty');
  return value;
}

export function secretsCommand(program: Command) {
  const noun = program
    .command('secrets')
    .description('Manage environment secrets (write-only; values come from standard input)');
  listAction(noun, 'orgEnv', {
    description: 'List the secret keys of an environment (never their values)',
    path: LIST,
    key: 'environment_secrets',
    columns: cols('key', 'description', 'updated_at'),
  });
  action(noun, 'orgEnv', {
    name: 'set',
    args: ['<key>'],
    description: 'Create or replace a secret; its value is read from standard input',
    method: 'PUT',
    path: ITEM,
    options: (c) => withConfirm(c).option('--description <text>', 'what the secret is for'),
    makeBody: async (o) => ({
      value: await secretValue(),
      ...(o.description !== undefined ? { description: o.description } : {}),
      ...(o.confirm ? { protected_environment_confirmation: o.confirm } : {}),
    }),
  });
  action(noun, 'orgEnv', {
    name: 'delete',
    args: ['<key>'],
    description: 'Delete a secret',
    method: 'DELETE',
    path: ITEM,
    options: withConfirm,
    query: confirmQuery,
  });
}
