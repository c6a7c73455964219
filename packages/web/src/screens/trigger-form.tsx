import { zodResolver } from '@hookform/resolvers/zod';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { z } from 'zod';
import { Button, Card, ErrorNote, Field, Input, Select } from '../components/ui';
import {
  createTrigger,
  type TriggerBody,
  type TriggerPatch,
  type TriggerTarget,
  updateTrigger,
} from '../lib/queries/triggers';
import { SchedulePreview } from './schedule-preview';
import type { Trigger } from './trigger-types';

export type { Occurrence, Schedule, Secret, Trigger } from './trigger-types';

// The schedule and webhook settings of a pipeline trigger (docs/triggers.md), with the dry-run
// preview of the next fire times shown while the cron and zone are typed.

const formSchema = z.object({
  name: z.string().min(1, 'Give the trigger a name').max(100),
  slug: z
    .string()
    .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'Lowercase letters, digits and hyphens')
    .or(z.literal('')),
  kind: z.enum(['schedule', 'webhook']),
  cron: z.string(),
  time_zone: z.string(),
  overlap: z.enum(['skip', 'buffer_one', 'allow']),
  catch_up_policy: z.enum(['latest', 'skip', 'all']),
  window_seconds: z.coerce.number().int().min(0),
  max_runs: z.coerce.number().int().min(1).max(100),
  jitter_seconds: z.coerce.number().int().min(0).max(900),
  input_mapping: z.string(),
});
export type TriggerForm = z.infer<typeof formSchema>;

const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

export const formFrom = (t?: Trigger): TriggerForm => ({
  name: t?.name ?? '',
  slug: '',
  kind: t?.kind ?? 'schedule',
  cron: t?.schedule?.cron ?? '0 2 * * *',
  time_zone: t?.schedule?.time_zone ?? browserZone(),
  overlap: t?.schedule?.overlap ?? 'skip',
  catch_up_policy: t?.schedule?.catch_up.policy ?? 'latest',
  window_seconds: t?.schedule?.catch_up.window_seconds ?? 86400,
  max_runs: t?.schedule?.catch_up.max_runs ?? 10,
  jitter_seconds: t?.schedule?.jitter_seconds ?? 0,
  input_mapping: Object.entries(t?.webhook?.input_mapping ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join('\n'),
});

/** `key=/json/pointer` lines into the API's input_mapping object. */
const mappingOf = (text: string) =>
  Object.fromEntries(
    text
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .map((l) => {
        const i = l.indexOf('=');
        return i < 0 ? [l, ''] : [l.slice(0, i).trim(), l.slice(i + 1).trim()];
      }),
  );

const scheduleOf = (v: TriggerForm) => ({
  cron: v.cron.trim(),
  time_zone: v.time_zone.trim(),
  overlap: v.overlap,
  catch_up: {
    policy: v.catch_up_policy,
    window_seconds: Number(v.window_seconds),
    max_runs: Number(v.max_runs),
  },
  jitter_seconds: Number(v.jitter_seconds),
});

/** The body of a create (no `existing`) or a change. */
export function bodyOf(v: TriggerForm, existing?: Trigger): Record<string, unknown> {
  if (existing)
    return existing.kind === 'schedule'
      ? { name: v.name, schedule: scheduleOf(v) }
      : { name: v.name, webhook: { input_mapping: mappingOf(v.input_mapping) } };
  return {
    name: v.name,
    kind: v.kind,
    ...(v.slug ? { slug: v.slug } : {}),
    ...(v.kind === 'schedule'
      ? { schedule: scheduleOf(v) }
      : { webhook: { input_mapping: mappingOf(v.input_mapping) } }),
  };
}

/** Create (`existing` absent) or change a trigger of `at`; `query` carries the confirmation. */
export function TriggerEditor(props: {
  at: TriggerTarget;
  existing?: Trigger;
  query: Record<string, string>;
  onSaved: (t: Trigger) => void;
  onCancel?: () => void;
}) {
  const { existing } = props;
  const form = useForm<TriggerForm>({
    resolver: zodResolver(formSchema) as never,
    defaultValues: formFrom(existing),
  });
  const [error, setError] = useState<unknown>(null);
  const v = form.watch();
  const kind = existing?.kind ?? v.kind;
  const errs = form.formState.errors;
  const submit = form.handleSubmit(async (values) => {
    setError(null);
    try {
      const body = bodyOf(values, existing);
      const t = existing
        ? await updateTrigger(
            { ...props.at, pipeline_trigger_slug: existing.slug },
            body as TriggerPatch,
            props.query,
          )
        : await createTrigger(props.at, body as TriggerBody, props.query);
      props.onSaved(t);
    } catch (e) {
      setError(e);
    }
  });
  const field = (name: keyof TriggerForm, label: string, hint?: string, type = 'text') => (
    <Field label={label} hint={hint} error={errs[name]?.message}>
      {({ id, describedBy, invalid }) => (
        <Input
          id={id}
          type={type}
          aria-describedby={describedBy}
          aria-invalid={invalid}
          {...form.register(name)}
        />
      )}
    </Field>
  );
  const select = (name: keyof TriggerForm, label: string, options: [string, string][], hint?: string) => (
    <Field label={label} hint={hint}>
      {({ id, describedBy }) => (
        <Select id={id} aria-describedby={describedBy} {...form.register(name)}>
          {options.map(([value, text]) => (
            <option key={value} value={value}>
              {text}
            </option>
          ))}
        </Select>
      )}
    </Field>
  );
  return (
    <form onSubmit={submit} noValidate className="space-y-4">
      <Card title={existing ? `Change ${existing.name}` : 'New trigger'}>
        <div className="grid gap-4 sm:grid-cols-3">
          {!existing &&
            select('kind', 'Kind', [
              ['schedule', 'Schedule (cron)'],
              ['webhook', 'Webhook (signed deliveries)'],
            ])}
          {field('name', 'Name')}
          {!existing && field('slug', 'Slug (optional)', 'Generated from the name when empty.')}
        </div>
        {kind === 'schedule' ? (
          <div className="mt-4 grid gap-4 sm:grid-cols-3">
            {field('cron', 'Cron', '5 fields: minute hour day-of-month month day-of-week.')}
            {field('time_zone', 'Time zone', 'An IANA name, e.g. Europe/Berlin, or UTC.')}
            {select('overlap', 'When a run is still active', [
              ['skip', 'Skip the occurrence'],
              ['buffer_one', 'Buffer one, start it after'],
              ['allow', 'Start anyway'],
            ])}
            {select('catch_up_policy', 'Catch-up after downtime', [
              ['latest', 'Start the newest missed one'],
              ['skip', 'Start none'],
              ['all', 'Start each (up to the maximum)'],
            ])}
            {field(
              'window_seconds',
              'Catch-up window (seconds)',
              'Older occurrences are never started.',
              'number',
            )}
            {field('max_runs', 'Catch-up maximum runs', 'For "start each".', 'number')}
            {field(
              'jitter_seconds',
              'Jitter (seconds)',
              '0–900; spreads schedules off the minute.',
              'number',
            )}
          </div>
        ) : (
          <div className="mt-4 max-w-xl">
            <Field
              label="Input mapping"
              hint="One per line: run input key = JSON Pointer into the delivery body, e.g. region=/order/region."
            >
              {({ id, describedBy }) => (
                <textarea
                  id={id}
                  aria-describedby={describedBy}
                  rows={3}
                  className="block w-full rounded-md border border-slate-300 bg-white px-2.5 py-1.5 font-mono text-sm dark:border-slate-600 dark:bg-slate-900"
                  {...form.register('input_mapping')}
                />
              )}
            </Field>
          </div>
        )}
        {kind === 'schedule' && (
          <div className="mt-4">
            <SchedulePreview
              at={existing ? { ...props.at, pipeline_trigger_slug: existing.slug } : props.at}
              body={
                existing
                  ? { schedule: scheduleOf(v) }
                  : { name: v.name || 'preview', kind, schedule: scheduleOf(v) }
              }
              query={props.query}
            />
          </div>
        )}
      </Card>
      <ErrorNote error={error} />
      <div className="flex gap-2">
        <Button type="submit" variant="primary" disabled={form.formState.isSubmitting}>
          {existing ? 'Save changes' : 'Create trigger'}
        </Button>
        {props.onCancel && <Button onClick={props.onCancel}>Cancel</Button>}
      </div>
    </form>
  );
}

/** The signing secret of a webhook, shown once after create or rotate. */
export function SecretOnce(props: { secret: string; path?: string }) {
  return (
    <div
      role="status"
      className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm dark:border-amber-700 dark:bg-amber-950"
    >
      <p className="font-semibold">Copy the signing secret now: it is not shown again.</p>
      <code data-testid="new-secret" className="mt-1 block break-all font-mono text-xs">
        {props.secret}
      </code>
      {props.path && (
        <p className="mt-1 text-xs">
          Senders POST to the API host at <code>{props.path}</code> with Standard Webhooks headers.
        </p>
      )}
    </div>
  );
}
