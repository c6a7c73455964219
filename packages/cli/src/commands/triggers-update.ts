import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson } from '../io';
import { withStatus } from './pipelines-shared';
import {
  confirmOf,
  mapping,
  ONE,
  oneOf,
  printTrigger,
  type ScheduleFlags,
  scheduleBody,
  type Trigger,
  type TriggerOptions,
  withScheduleFlags,
  withTriggerOptions,
} from './triggers-shared';

type UpdateOptions = ApiOptions &
  TriggerOptions &
  ScheduleFlags & {
    name?: string;
    description?: string;
    map?: Record<string, string>;
    enable?: boolean;
    disable?: boolean;
  };

/** PATCH a trigger; pause and resume use it too. */
export async function patchTrigger(
  opts: ApiOptions & TriggerOptions,
  slug: string,
  body: Record<string, unknown>,
) {
  const client = await apiClient(opts);
  const { data } = await withStatus(
    client.PATCH(ONE, {
      params: { path: oneOf(opts, slug), query: {} },
      body: { ...body, ...confirmOf(opts) } as any,
    }),
  );
  const t = data as Trigger;
  if (opts.json) return printJson(t);
  printTrigger(t);
}

export function triggersUpdateCommand(triggers: Command) {
  withApiOptions(
    withScheduleFlags(
      withTriggerOptions(
        triggers
          .command('update')
          .description('Change a trigger (only the flags given)')
          .argument('<slug>', 'trigger slug')
          .option('--name <name>', 'display name')
          .option('--description <text>', 'free text')
          .option('--map <key=/pointer>', 'webhook: replace the input mapping (repeatable)', mapping)
          .option('--enable', 'enable it (a disabled trigger records nothing)')
          .option('--disable', 'disable it')
          .option('--confirm <env_slug>', 'the environment slug again, required by a protected environment'),
      ),
    ),
  ).action(async (slug: string, opts: UpdateOptions) => {
    const schedule = scheduleBody(opts);
    await patchTrigger(opts, slug, {
      ...(opts.name ? { name: opts.name } : {}),
      ...(opts.description !== undefined ? { description: opts.description } : {}),
      ...(opts.enable ? { enabled: true } : opts.disable ? { enabled: false } : {}),
      ...(Object.keys(schedule).length ? { schedule } : {}),
      ...(opts.map ? { webhook: { input_mapping: opts.map } } : {}),
    });
  });
}
