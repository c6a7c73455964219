import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson, printLines } from '../io';
import { withStatus } from './pipelines-shared';
import {
  confirmOf,
  ONE,
  oneOf,
  printTrigger,
  seconds,
  type TriggerOptions,
  withTriggerOptions,
} from './triggers-shared';

export function triggersRotateSecretCommand(triggers: Command) {
  withApiOptions(
    withTriggerOptions(
      triggers
        .command('rotate-secret')
        .description('Rotate a webhook signing secret; the previous one keeps verifying for a grace period')
        .argument('<slug>', 'trigger slug')
        .option(
          '--previous-valid-for <seconds>',
          'grace period of the current secret (0 after a leak)',
          seconds,
          86400,
        )
        .option('--confirm <env_slug>', 'the environment slug again, required by a protected environment'),
    ),
  ).action(async (slug: string, opts: ApiOptions & TriggerOptions & { previousValidFor: number }) => {
    const client = await apiClient(opts);
    const { data } = await withStatus(
      client.POST(`${ONE}:rotate-secret`, {
        params: { path: oneOf(opts, slug), query: {} },
        body: { previous_valid_for_seconds: opts.previousValidFor, ...confirmOf(opts) },
      }),
    );
    if (opts.json) return printJson(data);
    printTrigger(data);
    printLines([`new signing secret (shown once, store it now): ${data.secret}`]);
  });
}
