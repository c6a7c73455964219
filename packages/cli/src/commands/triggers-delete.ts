import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson, printLines } from '../io';
import { withStatus } from './pipelines-shared';
import { confirmOf, ONE, oneOf, type TriggerOptions, withTriggerOptions } from './triggers-shared';

export function triggersDeleteCommand(triggers: Command) {
  withApiOptions(
    withTriggerOptions(
      triggers
        .command('delete')
        .description('Delete a trigger with its ledger and deliveries (its runs stay)')
        .argument('<slug>', 'trigger slug')
        .option('--confirm <env_slug>', 'the environment slug again, required by a protected environment'),
    ),
  ).action(async (slug: string, opts: ApiOptions & TriggerOptions) => {
    const client = await apiClient(opts);
    await withStatus(client.DELETE(ONE, { params: { path: oneOf(opts, slug), query: confirmOf(opts) } }));
    if (opts.json) return printJson({ deleted: slug });
    printLines([`trigger ${slug} deleted`]);
  });
}
