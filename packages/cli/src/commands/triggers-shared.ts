import type { paths } from '@sluice/client';
import { type Command, InvalidArgumentError } from 'commander';
import { printLines, printTable } from '../io';
import { type EnvOptions, peOf, withEnvOptions } from './pipelines-shared';

// What the trigger commands share: the scope flags (environment + --pipeline), the typed
// resource, the schedule flags of create/update/preview, and the human output.

export const TRIGGERS =
  '/organizations/{organization}/projects/{project}/environments/{environment}/pipelines/{pipeline}/triggers';
export const ONE = `${TRIGGERS}/{pipeline_trigger_slug}` as const;
export type Trigger = paths[typeof ONE]['get']['responses'][200]['content']['application/json'];
export type TriggerOptions = EnvOptions & { pipeline: string; confirm?: string };

export function withTriggerOptions(cmd: Command): Command {
  return withEnvOptions(cmd).requiredOption('--pipeline <slug>', 'pipeline the trigger runs');
}

export const placeOf = (o: TriggerOptions) => ({ ...peOf(o), pipeline: o.pipeline });
export const oneOf = (o: TriggerOptions, slug: string) => ({ ...placeOf(o), pipeline_trigger_slug: slug });
export const confirmOf = (o: { confirm?: string }) =>
  o.confirm !== undefined ? { protected_environment_confirmation: o.confirm } : {};

export const seconds = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('a whole number of seconds');
  return n;
};

/** `--map region=/order/region` (repeatable) → input_mapping. */
export const mapping = (v: string, acc: Record<string, string> = {}) => {
  const at = v.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('KEY=/json/pointer');
  return { ...acc, [v.slice(0, at)]: v.slice(at + 1) };
};

export type ScheduleFlags = {
  cron?: string;
  timeZone?: string;
  overlap?: string;
  catchUp?: string;
  catchUpWindow?: number;
  catchUpMaxRuns?: number;
  jitter?: number;
  startAt?: string;
  endAt?: string;
};

/** The schedule flags; `timeZone` is the default of --time-zone (create: UTC; a change: none). */
export function withScheduleFlags(cmd: Command, defaults: { timeZone?: string } = {}): Command {
  return cmd
    .option('--cron <expr>', 'cron, 5 fields (minute hour day-of-month month day-of-week)')
    .option('--time-zone <iana>', 'IANA time zone, e.g. Europe/Berlin or UTC', defaults.timeZone)
    .option('--overlap <policy>', 'skip | buffer_one | allow')
    .option('--catch-up <policy>', 'latest | skip | all')
    .option('--catch-up-window <seconds>', 'catch-up window in seconds', seconds)
    .option('--catch-up-max-runs <n>', 'policy all: at most this many', seconds)
    .option('--jitter <seconds>', 'deterministic jitter bound, seconds', seconds)
    .option('--start-at <iso>', 'no occurrence before this instant')
    .option('--end-at <iso>', 'no occurrence at or after this instant');
}

/** The schedule part of a body from the flags, only the fields given. */
export function scheduleBody(f: ScheduleFlags) {
  const catchUp =
    f.catchUp !== undefined || f.catchUpWindow !== undefined || f.catchUpMaxRuns !== undefined
      ? {
          ...(f.catchUp !== undefined ? { policy: f.catchUp } : {}),
          ...(f.catchUpWindow !== undefined ? { window_seconds: f.catchUpWindow } : {}),
          ...(f.catchUpMaxRuns !== undefined ? { max_runs: f.catchUpMaxRuns } : {}),
        }
      : undefined;
  const body = {
    cron: f.cron,
    time_zone: f.timeZone,
    overlap: f.overlap,
    catch_up: catchUp,
    jitter_seconds: f.jitter,
    start_at: f.startAt,
    end_at: f.endAt,
  };
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

export function printTrigger(t: Trigger) {
  const lines = [
    `trigger ${t.slug} (${t.kind}) of pipeline ${t.pipeline_slug} in ${t.environment_slug}`,
    `  enabled ${t.enabled}, paused ${t.paused}${t.pause_note ? ` (${t.pause_note})` : ''}`,
  ];
  if (t.schedule) {
    const s = t.schedule;
    lines.push(
      `  cron "${s.cron}" in ${s.time_zone}; overlap ${s.overlap}; catch-up ${s.catch_up.policy} within ${s.catch_up.window_seconds} s` +
        (s.catch_up.policy === 'all' ? ` (max ${s.catch_up.max_runs})` : '') +
        (s.jitter_seconds ? `; jitter ≤ ${s.jitter_seconds} s` : ''),
    );
    lines.push(`  next: ${t.next_fire_times.join(', ') || '-'}`);
  }
  if (t.webhook) {
    lines.push(`  deliveries: POST ${t.webhook.delivery_path}`);
    for (const s of t.webhook.secrets) {
      lines.push(
        `  secret ${s.id} ${s.prefix}… expires ${s.expires_at ?? 'never'}, last verified ${s.last_verified_at ?? 'never'}`,
      );
    }
  }
  const o = t.last_occurrence;
  lines.push(
    `  last: ${o ? `${o.nominal_at} ${o.outcome}${o.run_slug ? ` run ${o.run_slug}` : ''}${o.reason ? ` (${o.reason})` : ''}` : '-'}`,
  );
  printLines(lines);
}

export function printTriggerTable(rows: Trigger[]) {
  printTable(rows, [
    { header: 'SLUG', value: (t) => t.slug },
    { header: 'KIND', value: (t) => t.kind },
    { header: 'STATE', value: (t) => (!t.enabled ? 'disabled' : t.paused ? 'paused' : 'active') },
    { header: 'SCHEDULE', value: (t) => (t.schedule ? `${t.schedule.cron} ${t.schedule.time_zone}` : null) },
    { header: 'NEXT', value: (t) => t.next_fire_times[0] },
    {
      header: 'LAST',
      value: (t) =>
        t.last_occurrence ? `${t.last_occurrence.outcome} ${t.last_occurrence.nominal_at}` : null,
    },
  ]);
}
