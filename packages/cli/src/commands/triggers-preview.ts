import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson, printLines, printTable } from '../io';
import { withStatus } from './pipelines-shared';
import {
  ONE,
  oneOf,
  placeOf,
  type ScheduleFlags,
  scheduleBody,
  TRIGGERS,
  type TriggerOptions,
  withScheduleFlags,
  withTriggerOptions,
} from './triggers-shared';

type Preview = {
  time_zone: string | null;
  tz_version: string;
  next_fire_times: { nominal_at: string; fire_at: string; local_time: string; dst: string }[];
};

export function triggersPreviewCommand(triggers: Command) {
  withApiOptions(
    withScheduleFlags(
      withTriggerOptions(
        triggers
          .command('preview')
          .description(
            'The next 10 fire times with DST flags, without saving: of a new schedule (flags), or of an existing trigger with the flags changed',
          )
          .argument('[slug]', 'existing trigger to preview a change of'),
      ),
    ),
  ).action(async (slug: string | undefined, opts: ApiOptions & TriggerOptions & ScheduleFlags) => {
    const client = await apiClient(opts);
    const schedule = scheduleBody(opts);
    const { data } = slug
      ? await withStatus(
          client.PATCH(ONE, {
            params: { path: oneOf(opts, slug), query: { dry_run: 'true' } },
            body: { schedule } as any,
          }),
        )
      : await withStatus(
          client.POST(TRIGGERS, {
            params: { path: placeOf(opts), query: { dry_run: 'true' } },
            body: { name: 'preview', kind: 'schedule', schedule } as any,
          }),
        );
    const p = data as unknown as Preview;
    if (opts.json) return printJson(p);
    printTable(p.next_fire_times, [
      { header: 'NOMINAL (UTC)', value: (x) => x.nominal_at },
      { header: 'FIRES (UTC)', value: (x) => x.fire_at },
      { header: `LOCAL (${p.time_zone})`, value: (x) => x.local_time },
      { header: 'DST', value: (x) => (x.dst === 'none' ? '' : x.dst) },
    ]);
    printLines([`time-zone rules ${p.tz_version}`]);
  });
}
