import { zodResolver } from '@hookform/resolvers/zod';
import { useEffect, useState } from 'react';
import { useForm } from 'react-hook-form';
import { z } from 'zod';
import {
  Badge,
  Button,
  Card,
  ErrorNote,
  Field,
  Input,
  Select,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';
import { api } from '../lib/api';

// The schedule and webhook settings of a pipeline trigger (docs/triggers.md), with the dry-run
// preview of the next fire times shown while the cron and zone are typed.

export type Occurrence = {
  nominal_at: string;
  fire_at: string;
  outcome: string;
  reason: string | null;
  run_slug: string | null;
};
export type Schedule = {
  cron: string;
  time_zone: string;
  overlap: 'skip' | 'buffer_one' | 'allow';
  catch_up: { policy: 'latest' | 'skip' | 'all'; window_seconds: number; max_runs: number };
  jitter_seconds: number;
  start_at: string | null;
  end_at: string | null;
};
export type Secret = {
  id: string;
  prefix: string;
  created_at: string;
  expires_at: string | null;
  last_verified_at: string | null;
};
export type Trigger = {
  slug: string;
  name: string;
  kind: 'schedule' | 'webhook';
  pipeline_slug: string;
  environment_slug: string;
  enabled: boolean;
  paused: boolean;
  pause_note: string | null;
  description: string | null;
  schedule: Schedule | null;
  webhook: { delivery_path: string; secrets: Secret[]; input_mapping: Record<string, string> } | null;
  last_occurrence: Occurrence | null;
  next_fire_times: string[];
  created_at: string;
  updated_at: string;
  secret?: string;
};
type Preview = {
  time_zone: string | null;
  tz_version: string;
  next_fire_times: { nominal_at: string; fire_at: string; local_time: string; dst: string }[];
};

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

const dstLabel = { gap_shifted: 'moved past a DST gap', repeated: 'repeated wall time' } as const;

/** The next fire times of the schedule as typed, asked of the server with ?dry_run=true. */
function SchedulePreview(props: { url: string; method: 'POST' | 'PATCH'; body: unknown; query: object }) {
  const [preview, setPreview] = useState<Preview | null>(null);
  const [error, setError] = useState<unknown>(null);
  const key = JSON.stringify(props.body);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the body is compared by its JSON.
  useEffect(() => {
    let live = true;
    const t = window.setTimeout(async () => {
      try {
        const p =
          props.method === 'POST'
            ? await api.post<Preview>(props.url, props.body, { ...props.query, dry_run: 'true' })
            : await api.patch<Preview>(
                `${props.url}?dry_run=true${Object.entries(props.query)
                  .map(([k, v]) => `&${k}=${encodeURIComponent(String(v))}`)
                  .join('')}`,
                props.body,
              );
        if (live) {
          setPreview(p);
          setError(null);
        }
      } catch (e) {
        if (live) {
          setError(e);
          setPreview(null);
        }
      }
    }, 350);
    return () => {
      live = false;
      window.clearTimeout(t);
    };
  }, [key, props.url, props.method]);
  return (
    <section aria-label="Preview of the next fire times" aria-live="polite" data-testid="schedule-preview">
      <ErrorNote error={error} />
      {preview && (
        <>
          <p className="mb-1 text-xs text-slate-600 dark:text-slate-400">
            Next {preview.next_fire_times.length} fire times in {preview.time_zone} (zone rules{' '}
            {preview.tz_version}); nothing is saved until you press the button.
          </p>
          <table className={tableClass}>
            <thead>
              <tr>
                {['Local time', 'Fires at (UTC)', 'DST'].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {preview.next_fire_times.map((f) => (
                <tr key={f.nominal_at} data-dst={f.dst}>
                  <td className={`${tdClass} font-mono text-xs`}>{f.local_time}</td>
                  <td className={`${tdClass} font-mono text-xs`}>{f.fire_at}</td>
                  <td className={tdClass}>
                    {f.dst === 'none' ? (
                      ''
                    ) : (
                      <Badge tone="amber">{dstLabel[f.dst as keyof typeof dstLabel]}</Badge>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

/** Create (POST to `url`) or change (PATCH `url`) a trigger; `query` carries the confirmation. */
export function TriggerEditor(props: {
  url: string;
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
        ? await api.patch<Trigger>(props.url, { ...body, ...confirmationOf(props.query) })
        : await api.post<Trigger>(props.url, body, props.query);
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
              url={props.url}
              method={existing ? 'PATCH' : 'POST'}
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

const confirmationOf = (q: Record<string, string>) =>
  q.protected_environment_confirmation
    ? { protected_environment_confirmation: q.protected_environment_confirmation }
    : {};

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
