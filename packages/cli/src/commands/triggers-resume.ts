import type { Command } from 'commander';
import { type ApiOptions, withApiOptions } from '../api';
import { type TriggerOptions, withTriggerOptions } from './triggers-shared';
import { patchTrigger } from './triggers-update';

export function triggersResumeCommand(triggers: Command) {
  withApiOptions(
    withTriggerOptions(
      triggers
        .command('resume')
        .description('Resume a paused trigger from the next occurrence')
        .argument('<slug>', 'trigger slug')
        .option('--confirm <env_slug>', 'the environment slug again, required by a protected environment'),
    ),
  ).action(async (slug: string, opts: ApiOptions & TriggerOptions) => {
    await patchTrigger(opts, slug, { paused: false });
  });
}
