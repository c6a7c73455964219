import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { type ReactNode, useState } from 'react';
import {
  Button,
  Card,
  ErrorNote,
  Field,
  Input,
  PageHeader,
  Select,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';

import { formatTime } from '../lib/format';
import { usePlace } from '../lib/hooks';
import {
  deleteTrigger,
  rotateTriggerSecret,
  type TriggerPatch,
  triggerKeys,
  triggerQuery,
  updateTrigger,
} from '../lib/queries/triggers';
import { SecretOnce, TriggerEditor } from './trigger-form';
import { Deliveries, Ledger, type Search } from './trigger-history';
import { ConfirmField, triggerState } from './triggers';

/** One trigger: its settings, pause/resume, secrets with rotation, and its ledger or deliveries. */
export function TriggerDetail() {
  const { org, project, pipeline, trigger } = useParams({
    from: '/authed/o/$org/pipelines/$project/$pipeline/triggers/$trigger',
  });
  const search = useSearch({
    from: '/authed/o/$org/pipelines/$project/$pipeline/triggers/$trigger',
  }) as Search;
  const navigate = useNavigate();
  const place = usePlace(org, { project, env: search.env });
  const at = {
    organization: org,
    project,
    environment: place.env ?? '',
    pipeline,
    pipeline_trigger_slug: trigger,
  };
  const qc = useQueryClient();
  const [confirmation, setConfirmation] = useState('');
  const [editing, setEditing] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const [note, setNote] = useState('');
  const [grace, setGrace] = useState('86400');
  const query: Record<string, string> =
    place.environment?.protected && confirmation ? { protected_environment_confirmation: confirmation } : {};
  const one = useQuery(triggerQuery(at));
  const refresh = () => qc.invalidateQueries({ queryKey: triggerKeys.one(at) });
  const change = useMutation({
    mutationFn: (body: TriggerPatch) => updateTrigger(at, body, query),
    onSuccess: refresh,
  });
  const rotate = useMutation({
    mutationFn: () => rotateTriggerSecret(at, Number(grace), query),
    onSuccess: (t) => {
      setSecret(t.secret ?? null);
      void refresh();
    },
  });
  const remove = useMutation({
    mutationFn: () => deleteTrigger(at, query),
    onSuccess: () =>
      navigate({
        to: '/o/$org/pipelines/$project/$pipeline',
        params: { org, project, pipeline },
        search: { tab: 'triggers', env: place.env },
      }),
  });
  const t = one.data;
  const setSearch = (patch: Partial<Search>) =>
    navigate({
      to: '/o/$org/pipelines/$project/$pipeline/triggers/$trigger',
      params: { org, project, pipeline, trigger },
      search: { ...search, cursor: undefined, direction: undefined, ...patch },
    });
  const facts: [string, ReactNode][] = t
    ? [
        ['Kind', t.kind],
        ['State', triggerState(t)],
        ['Pause note', t.pause_note ?? '—'],
        ...(t.schedule
          ? ([
              ['Cron', <code key="c">{t.schedule.cron}</code>],
              ['Time zone', t.schedule.time_zone],
              ['Overlap', t.schedule.overlap],
              [
                'Catch-up',
                `${t.schedule.catch_up.policy}, window ${t.schedule.catch_up.window_seconds} s, at most ${t.schedule.catch_up.max_runs} runs`,
              ],
              ['Jitter', `${t.schedule.jitter_seconds} s`],
              ['Next fire times (UTC)', t.next_fire_times.map(formatTime).join(', ') || '—'],
            ] as [string, ReactNode][])
          : ([
              [
                'Endpoint (API host)',
                <code key="p" data-testid="delivery-path" className="break-all">
                  POST {t.webhook?.delivery_path}
                </code>,
              ],
              [
                'Input mapping',
                Object.entries(t.webhook?.input_mapping ?? {})
                  .map(([k, v]) => `${k} ← ${v}`)
                  .join(', ') || '—',
              ],
            ] as [string, ReactNode][])),
        [
          'Last occurrence',
          t.last_occurrence
            ? `${t.last_occurrence.outcome} at ${formatTime(t.last_occurrence.fire_at)}${t.last_occurrence.reason ? ` (${t.last_occurrence.reason})` : ''}`
            : '—',
        ],
      ]
    : [];
  return (
    <div className="space-y-4">
      <p className="text-sm">
        <Link
          to="/o/$org/pipelines/$project/$pipeline"
          params={{ org, project, pipeline }}
          search={{ tab: 'triggers', env: place.env }}
          className="text-blue-700 hover:underline dark:text-blue-300"
        >
          ← Triggers of {pipeline}
        </Link>
      </p>
      <ErrorNote error={one.error} />
      {t && (
        <PageHeader
          title={t.name}
          subtitle={
            <>
              <code>{t.slug}</code> · {pipeline} in {t.environment_slug}
            </>
          }
          actions={
            <>
              <Button onClick={() => setEditing((e) => !e)}>{editing ? 'Close editor' : 'Edit'}</Button>
              <Button onClick={() => change.mutate({ enabled: !t.enabled })}>
                {t.enabled ? 'Disable' : 'Enable'}
              </Button>
              <Button
                variant="danger"
                onClick={() => {
                  if (window.confirm(`Delete the trigger ${t.name} with its ledger?`)) remove.mutate();
                }}
              >
                Delete
              </Button>
            </>
          }
        />
      )}
      {place.environment?.protected && (
        <ConfirmField env={place.environment.slug} value={confirmation} onChange={setConfirmation} />
      )}
      <ErrorNote error={change.error ?? remove.error ?? rotate.error} />
      {t && editing && (
        <TriggerEditor
          at={at}
          existing={t}
          query={query}
          onCancel={() => setEditing(false)}
          onSaved={() => {
            setEditing(false);
            void refresh();
          }}
        />
      )}
      {t && (
        <Card title="Settings">
          <dl className="grid grid-cols-[max-content_1fr] gap-x-6 gap-y-1 text-sm">
            {facts.map(([k, v]) => (
              <div key={k} className="contents">
                <dt className="font-medium text-slate-600 dark:text-slate-400">{k}</dt>
                <dd>{v}</dd>
              </div>
            ))}
          </dl>
        </Card>
      )}
      {t && (
        <Card title={t.paused ? 'Paused' : 'Pause'}>
          {t.paused ? (
            <Button onClick={() => change.mutate({ paused: false })}>Resume</Button>
          ) : (
            <div className="flex flex-wrap items-end gap-2">
              <div className="w-full max-w-80">
                <Field label="Pause note" hint="Occurrences due while paused are recorded as skipped_paused.">
                  {({ id, describedBy }) => (
                    <Input
                      id={id}
                      aria-describedby={describedBy}
                      value={note}
                      onChange={(e) => setNote(e.target.value)}
                    />
                  )}
                </Field>
              </div>
              <Button onClick={() => change.mutate({ paused: true, pause_note: note || null })}>Pause</Button>
            </div>
          )}
        </Card>
      )}
      {t?.webhook && (
        <Card title="Signing secrets">
          {secret && <SecretOnce secret={secret} />}
          <table className={tableClass}>
            <caption className="sr-only">Live signing secrets, newest first</caption>
            <thead>
              <tr>
                {['Prefix', 'Created', 'Expires', 'Last verified'].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {t.webhook.secrets.map((s) => (
                <tr key={s.id} data-secret={s.id}>
                  <td className={`${tdClass} font-mono text-xs`}>{s.prefix}…</td>
                  <td className={`${tdClass} text-xs`}>{formatTime(s.created_at)}</td>
                  <td className={`${tdClass} text-xs`}>
                    {s.expires_at ? formatTime(s.expires_at) : 'current'}
                  </td>
                  <td className={`${tdClass} text-xs`}>
                    {s.last_verified_at ? formatTime(s.last_verified_at) : 'never'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <div className="mt-3 flex flex-wrap items-end gap-2">
            <div className="w-full max-w-72">
              <Field label="The current secret keeps verifying for">
                {({ id }) => (
                  <Select id={id} value={grace} onChange={(e) => setGrace(e.target.value)}>
                    <option value="0">0 s: revoke now (after a leak)</option>
                    <option value="3600">1 hour</option>
                    <option value="86400">1 day</option>
                    <option value="604800">7 days</option>
                  </Select>
                )}
              </Field>
            </div>
            <Button onClick={() => rotate.mutate()} disabled={rotate.isPending}>
              Rotate secret
            </Button>
          </div>
        </Card>
      )}
      {t?.kind === 'schedule' && place.env && (
        <Ledger at={at} search={search} onSearch={setSearch} org={org} project={project} env={place.env} />
      )}
      {t?.kind === 'webhook' && place.env && (
        <Deliveries
          at={at}
          search={search}
          onSearch={setSearch}
          org={org}
          project={project}
          env={place.env}
        />
      )}
    </div>
  );
}
