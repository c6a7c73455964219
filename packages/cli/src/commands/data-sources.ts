import type { Command } from 'commander';
import {
  type CredentialOptions,
  credentialsOf,
  refuseInlineCredentials,
  withCredentialOptions,
} from '../credentials';
import { CliError, ExitCode } from '../exit';
import { action, bodyOf, type CommonOptions, cols, listAction, printRecord } from '../resource';

const LIST = '/organizations/{organization}/data-sources';
const ITEM = '/organizations/{organization}/data-sources/{data_source}';

/** The file (and --set) without credentials, plus the credentials the flags name. */
async function dataSourceBody(o: CommonOptions, fields: string[]) {
  const body = await bodyOf(o, fields);
  refuseInlineCredentials(body, o.file ?? 'the body');
  const credentials = await credentialsOf(o as CredentialOptions);
  return credentials ? { ...body, credentials } : body;
}

export function dataSourcesCommand(program: Command) {
  const noun = program
    .command('data-sources')
    .description('Manage data sources: create from JSON/YAML, test, import schemas, branches, operations');
  listAction(noun, 'org', {
    description: 'List data sources',
    path: LIST,
    key: 'data_sources',
    columns: cols('slug', 'name', 'type', 'is_active', 'read_only', 'schema_status'),
  });
  action(noun, 'org', {
    name: 'get',
    args: ['<data_source>'],
    description: 'Show a data source',
    method: 'GET',
    path: ITEM,
  });
  action(noun, 'org', {
    name: 'create',
    description:
      'Create a data source from a JSON or YAML file ({type, name, slug, config}); credentials from env or stdin',
    method: 'POST',
    path: LIST,
    body: ['name', 'slug', 'type'],
    options: withCredentialOptions,
    makeBody: (o) => dataSourceBody(o, ['name', 'slug', 'type']),
  });
  action(noun, 'org', {
    name: 'update',
    args: ['<data_source>'],
    description: 'Change a data source (a new address needs its credentials again)',
    method: 'PATCH',
    path: ITEM,
    body: ['name'],
    options: withCredentialOptions,
    makeBody: (o) => dataSourceBody(o, ['name']),
  });
  action(noun, 'org', {
    name: 'set-credentials',
    args: ['<data_source>'],
    description: 'Replace the credentials (from --credential-env or --credentials-stdin)',
    method: 'PUT',
    path: '/organizations/{organization}/data-sources/{data_source}/credentials',
    options: withCredentialOptions,
    makeBody: async (o) => ({ credentials: (await credentialsOf(o as CredentialOptions)) ?? {} }),
  });
  action(noun, 'org', {
    name: 'delete',
    args: ['<data_source>'],
    description: 'Delete a data source',
    method: 'DELETE',
    path: ITEM,
  });
  action(noun, 'org', {
    name: 'test',
    args: ['<data_source>'],
    description: 'Test the connection of a saved data source; exit 1 when it fails',
    method: 'POST',
    path: '/organizations/{organization}/data-sources/{data_source}/test-connection',
    // The API answers 200 either way; scripts and CI branch on the exit code (README "Exit codes").
    print: (data, opts, args) => {
      printRecord(data, opts.json);
      if (data.ok === false) {
        const e = data.error as { code?: string; message?: string } | null;
        throw new CliError(
          ExitCode.failed,
          `connection test of ${args[0]} failed${e ? `: ${e.code}: ${e.message}` : ''}`,
        );
      }
    },
  });
  action(noun, 'org', {
    name: 'import-schema',
    args: ['<data_source>'],
    description: 'Start a schema import (asynchronous; see schema_status with get)',
    method: 'POST',
    path: '/organizations/{organization}/data-sources/{data_source}/schema-import',
  });
  listAction(noun, 'org', {
    name: 'branches',
    args: ['<data_source>'],
    description: 'List the branches of a git, GitHub or GitLab data source',
    path: '/organizations/{organization}/data-sources/{data_source}/branches',
    key: 'branches',
    columns: cols('name', 'is_default'),
    paged: false,
  });
  listAction(noun, 'org', {
    name: 'operations',
    args: ['<data_source>'],
    description: 'List the operations imported from an HTTP data source’s OpenAPI document',
    path: '/organizations/{organization}/data-sources/{data_source}/operations',
    key: 'operations',
    columns: cols('slug', 'method', 'path', 'summary'),
  });
}
