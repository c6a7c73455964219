import type { Command } from 'commander';
import { action, cols, confirmQuery, listAction, withConfirm } from '../resource';

const LIST =
  '/organizations/{organization}/projects/{project}/environments/{environment}/data-source-bindings';
const ITEM =
  '/organizations/{organization}/projects/{project}/environments/{environment}/pipelines/{pipeline}/data-source-bindings/{data_source_ref_slug}';

export function bindingsCommand(program: Command) {
  const noun = program
    .command('bindings')
    .description("Bind a pipeline's data source refs to data sources in an environment");
  listAction(noun, 'env', {
    description: 'List the bindings of an environment',
    path: LIST,
    key: 'data_source_bindings',
    columns: cols(
      'pipeline_slug',
      'data_source_ref_slug',
      'data_source_slug',
      'data_source_type',
      'bound_at',
    ),
    filters: [{ flag: 'pipeline', query: 'pipeline_slug', description: 'only this pipeline' }],
  });
  action(noun, 'env', {
    name: 'set',
    args: ['<pipeline>', '<ref>', '<data_source>'],
    description: 'Bind a ref of a pipeline to a data source',
    method: 'PUT',
    path: ITEM,
    options: withConfirm,
    makeBody: async (o, args) => ({
      data_source_slug: args[2],
      ...(o.confirm ? { protected_environment_confirmation: o.confirm } : {}),
    }),
  });
  action(noun, 'env', {
    name: 'delete',
    args: ['<pipeline>', '<ref>'],
    description: 'Remove a binding',
    method: 'DELETE',
    path: ITEM,
    options: withConfirm,
    query: confirmQuery,
  });
}
