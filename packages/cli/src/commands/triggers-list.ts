import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson } from '../io';
import { withStatus } from './pipelines-shared';
import {
  placeOf,
  printTriggerTable,
  TRIGGERS,
  type TriggerOptions,
  withTriggerOptions,
} from './triggers-shared';

export function triggersListCommand(triggers: Command) {
  withApiOptions(
    withTriggerOptions(
      triggers.command('list').description('List the triggers of a pipeline in an environment'),
    ).option('--cursor <cursor>', 'continue from a previous page'),
  ).action(async (opts: ApiOptions & TriggerOptions & { cursor?: string }) => {
    const client = await apiClient(opts);
    const { data } = await withStatus(
      client.GET(TRIGGERS, { params: { path: placeOf(opts), query: { limit: 100, cursor: opts.cursor } } }),
    );
    if (opts.json) return printJson(data);
    printTriggerTable(data.pipeline_triggers);
    if (data.has_more) process.stderr.write(`more triggers: --cursor ${data.next_cursor}\n`);
  });
}
