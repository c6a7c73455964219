import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson } from '../io';
import { withStatus } from './pipelines-shared';
import { ONE, oneOf, printTrigger, type TriggerOptions, withTriggerOptions } from './triggers-shared';

export function triggersGetCommand(triggers: Command) {
  withApiOptions(
    withTriggerOptions(
      triggers
        .command('get')
        .description('Show a trigger, its last occurrence and next fire times')
        .argument('<slug>', 'trigger slug'),
    ),
  ).action(async (slug: string, opts: ApiOptions & TriggerOptions) => {
    const client = await apiClient(opts);
    const { data } = await withStatus(client.GET(ONE, { params: { path: oneOf(opts, slug) } }));
    if (opts.json) return printJson(data);
    printTrigger(data);
  });
}
