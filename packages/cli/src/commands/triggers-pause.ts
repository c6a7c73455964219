import type { Command } from 'commander';
import { type ApiOptions, withApiOptions } from '../api';
import type { TriggerOptions } from './triggers-shared';
import { withTriggerOptions } from './triggers-shared';
import { patchTrigger } from './triggers-update';

export function triggersPauseCommand(triggers: Command) {
  withApiOptions(
    withTriggerOptions(
      triggers
        .command('pause')
        .description('Pause a trigger: missed occurrences are recorded as skipped_paused, never replayed')
        .argument('<slug>', 'trigger slug')
        .option('--note <text>', 'why (shown with the trigger and in the ledger)')
        .option('--confirm <env_slug>', 'the environment slug again, required by a protected environment'),
    ),
  ).action(async (slug: string, opts: ApiOptions & TriggerOptions & { note?: string }) => {
    await patchTrigger(opts, slug, { paused: true, pause_note: opts.note ?? null });
  });
}
