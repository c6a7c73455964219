import type { Command } from 'commander';
import { action, cols, confirmQuery, listAction, withConfirm } from '../resource';

const ITEM =
  '/organizations/{organization}/projects/{project}/environments/{environment}/pipelines/{pipeline}/checkpoints';

export function checkpointsCommand(program: Command) {
  const noun = program
    .command('checkpoints')
    .description('Show and reset the incremental cursors of a pipeline in an environment');
  listAction(noun, 'env', {
    description: "List a pipeline's checkpoints",
    args: ['<pipeline>'],
    path: ITEM,
    key: 'checkpoints',
    columns: cols('step_slug', 'cursor', 'run_slug', 'updated_at'),
  });
  action(noun, 'env', {
    name: 'reset',
    args: ['<pipeline>'],
    description: 'Reset the cursors: the next run starts from the beginning',
    method: 'DELETE',
    path: ITEM,
    options: withConfirm,
    query: confirmQuery,
  });
}
