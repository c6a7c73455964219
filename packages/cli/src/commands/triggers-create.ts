import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { CliError, ExitCode } from '../exit';
import { printJson, printLines } from '../io';
import { withStatus } from './pipelines-shared';
import {
  confirmOf,
  mapping,
  placeOf,
  printTrigger,
  type ScheduleFlags,
  scheduleBody,
  TRIGGERS,
  type Trigger,
  type TriggerOptions,
  withScheduleFlags,
  withTriggerOptions,
} from './triggers-shared';

type CreateOptions = ApiOptions &
  TriggerOptions &
  ScheduleFlags & {
    kind: string;
    name: string;
    slug?: string;
    description?: string;
    map?: Record<string, string>;
    paused?: boolean;
    pauseNote?: string;
  };

export function triggersCreateCommand(triggers: Command) {
  withApiOptions(
    withScheduleFlags(
      withTriggerOptions(
        triggers
          .command('create')
          .description('Create a schedule or webhook trigger (a webhook prints its signing secret once)')
          .requiredOption('--kind <kind>', 'schedule | webhook')
          .requiredOption('--name <name>', 'display name')
          .option('--slug <slug>', 'slug (generated from the name otherwise)')
          .option('--description <text>', 'free text')
          .option(
            '--map <key=/pointer>',
            'webhook: run input key from a JSON Pointer into the body (repeatable)',
            mapping,
          )
          .option('--paused', 'create it paused')
          .option('--pause-note <text>', 'why it is paused')
          .option('--confirm <env_slug>', 'the environment slug again, required by a protected environment'),
      ),
      { timeZone: 'UTC' },
    ),
  ).action(async (opts: CreateOptions) => {
    if (opts.kind !== 'schedule' && opts.kind !== 'webhook')
      throw new CliError(ExitCode.failed, '--kind is schedule or webhook');
    const client = await apiClient(opts);
    const body = {
      name: opts.name,
      kind: opts.kind,
      ...(opts.slug ? { slug: opts.slug } : {}),
      ...(opts.description ? { description: opts.description } : {}),
      ...(opts.paused ? { paused: true, pause_note: opts.pauseNote ?? null } : {}),
      ...(opts.kind === 'schedule'
        ? { schedule: scheduleBody(opts) }
        : { webhook: { input_mapping: opts.map ?? {} } }),
      ...confirmOf(opts),
    };
    const { data } = await withStatus(
      client.POST(TRIGGERS, { params: { path: placeOf(opts), query: {} }, body: body as any }),
    );
    const created = data as Trigger & { secret?: string };
    if (opts.json) return printJson(created);
    printTrigger(created);
    if (created.secret) {
      printLines([`signing secret (shown once, store it now): ${created.secret}`]);
    }
  });
}
