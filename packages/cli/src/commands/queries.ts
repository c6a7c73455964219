import type { Command } from 'commander';
import { applySet, readObjectFile } from '../document';
import { action, collect, cols, listAction } from '../resource';

const LIST = '/organizations/{organization}/queries';
const ITEM = '/organizations/{organization}/queries/{query_slug}';

export function queriesCommand(program: Command) {
  const noun = program.command('queries').description('Manage and execute saved queries');
  listAction(noun, 'org', {
    description: 'List saved queries',
    path: LIST,
    key: 'queries',
    columns: cols('slug', 'name', 'data_source_slug', 'updated_at'),
  });
  action(noun, 'org', {
    name: 'get',
    args: ['<query>'],
    description: 'Show a saved query',
    method: 'GET',
    path: ITEM,
  });
  action(noun, 'org', {
    name: 'create',
    description: 'Save a query (--file with {name, data_source_slug, statement}, or the flags)',
    method: 'POST',
    path: LIST,
    body: ['name', 'slug', 'description', 'data_source_slug'],
  });
  action(noun, 'org', {
    name: 'update',
    args: ['<query>'],
    description: 'Change a saved query',
    method: 'PATCH',
    path: ITEM,
    body: ['name', 'description', 'data_source_slug'],
  });
  action(noun, 'org', {
    name: 'delete',
    args: ['<query>'],
    description: 'Delete a saved query',
    method: 'DELETE',
    path: ITEM,
  });
  action(noun, 'org', {
    name: 'execute',
    args: ['<query>'],
    description: 'Execute a saved query; --param KEY=VALUE or --params-file',
    method: 'POST',
    path: '/organizations/{organization}/queries/{query_slug}:execute',
    options: (c) =>
      c
        .option('--param <key=value>', 'a parameter (repeatable; JSON values)', collect, [] as string[])
        .option('--params-file <path>', 'parameters as a JSON or YAML object'),
    makeBody: async (o) => {
      const parameters = o.paramsFile ? await readObjectFile(String(o.paramsFile)) : {};
      for (const p of (o.param as string[]) ?? []) applySet(parameters, p);
      return { parameters };
    },
  });
  listAction(noun, 'org', {
    name: 'executions',
    args: ['<query>'],
    description: 'List the executions of a saved query',
    path: '/organizations/{organization}/queries/{query_slug}/executions',
    key: 'query_executions',
    columns: cols('slug', 'status', 'row_count', 'truncated', 'duration_ms', 'executed_at'),
  });
  action(noun, 'org', {
    name: 'execution',
    args: ['<execution>'],
    description: 'Show one execution and its result',
    method: 'GET',
    path: '/organizations/{organization}/query-executions/{execution_slug}',
  });
}
