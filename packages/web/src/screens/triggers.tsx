import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { PlacePicker } from '../components/place-picker';
import {
  Badge,
  Button,
  Card,
  Empty,
  ErrorNote,
  Field,
  Input,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';

import { formatTime } from '../lib/format';
import { usePlace } from '../lib/hooks';
import { type CreatedTrigger, triggerKeys, triggersQuery } from '../lib/queries/triggers';
import { SecretOnce, type Trigger, TriggerEditor } from './trigger-form';

export const triggerState = (t: Trigger) =>
  !t.enabled ? (
    <Badge>disabled</Badge>
  ) : t.paused ? (
    <Badge tone="amber">paused</Badge>
  ) : (
    <Badge tone="green">active</Badge>
  );

/** The confirmation a protected environment needs for changes: the environment slug, typed. */
export function ConfirmField(props: { env: string; value: string; onChange: (v: string) => void }) {
  return (
    <div className="max-w-sm">
      <Field label={`Type ${props.env} to change triggers in this protected environment`}>
        {({ id }) => <Input id={id} value={props.value} onChange={(e) => props.onChange(e.target.value)} />}
      </Field>
    </div>
  );
}

/** The triggers tab of a pipeline: its schedules and webhooks in one environment. */
export function TriggersPanel(props: {
  org: string;
  project: string;
  pipeline: string;
  env?: string;
  onEnv: (env: string | undefined) => void;
}) {
  const { org, project, pipeline } = props;
  const place = usePlace(org, { project, env: props.env });
  const at = { organization: org, project, environment: place.env ?? '', pipeline };
  const qc = useQueryClient();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedTrigger | null>(null);
  const [confirmation, setConfirmation] = useState('');
  const list = useQuery(triggersQuery(at));
  const query: Record<string, string> =
    place.environment?.protected && confirmation ? { protected_environment_confirmation: confirmation } : {};
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <PlacePicker
          projects={[{ slug: project, name: project }]}
          environments={place.envs.data?.environments ?? []}
          project={project}
          env={place.env}
          onChange={(p) => props.onEnv(p.env)}
        />
        {!creating && (
          <Button variant="primary" onClick={() => setCreating(true)}>
            New trigger
          </Button>
        )}
      </div>
      {place.environment?.protected && (
        <ConfirmField env={place.environment.slug} value={confirmation} onChange={setConfirmation} />
      )}
      {created && 'secret' in created && (
        <SecretOnce secret={created.secret} path={created.webhook?.delivery_path} />
      )}
      {creating && place.env && (
        <TriggerEditor
          key={place.env}
          at={at}
          query={query}
          onCancel={() => setCreating(false)}
          onSaved={(t) => {
            setCreated(t);
            setCreating(false);
            void qc.invalidateQueries({ queryKey: triggerKeys.list(at) });
          }}
        />
      )}
      <Card title={`Triggers in ${place.environment?.name ?? place.env ?? '…'}`}>
        <ErrorNote error={list.error} />
        {list.data?.pipeline_triggers.length === 0 ? (
          <Empty>No trigger runs this pipeline here yet: add a schedule or a webhook.</Empty>
        ) : (
          <table className={tableClass}>
            <caption className="sr-only">Triggers of {pipeline}</caption>
            <thead>
              <tr>
                {['Trigger', 'Kind', 'State', 'When', 'Next fire', 'Last occurrence'].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {list.data?.pipeline_triggers.map((t) => (
                <tr key={t.slug} data-trigger={t.slug}>
                  <td className={tdClass}>
                    <Link
                      to="/o/$org/pipelines/$project/$pipeline/triggers/$trigger"
                      params={{ org, project, pipeline, trigger: t.slug }}
                      search={{ env: place.env }}
                      className="text-blue-700 hover:underline dark:text-blue-300"
                    >
                      {t.name}
                    </Link>
                  </td>
                  <td className={tdClass}>{t.kind}</td>
                  <td className={tdClass}>{triggerState(t)}</td>
                  <td className={`${tdClass} font-mono text-xs`}>
                    {t.schedule ? `${t.schedule.cron} (${t.schedule.time_zone})` : t.webhook?.delivery_path}
                  </td>
                  <td className={`${tdClass} whitespace-nowrap text-xs`}>
                    {formatTime(t.next_fire_times[0])}
                  </td>
                  <td className={`${tdClass} text-xs`}>
                    {t.last_occurrence
                      ? `${t.last_occurrence.outcome} ${formatTime(t.last_occurrence.fire_at)}`
                      : '—'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
    </div>
  );
}
