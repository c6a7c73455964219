import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { PlacePicker } from '../components/place-picker';
import { Card, Empty, ErrorNote, PageHeader, tableClass, tdClass, thClass } from '../components/ui';

import { formatTime } from '../lib/format';
import { usePlace } from '../lib/hooks';
import { environmentTriggersQuery } from '../lib/queries/triggers';
import { triggerState } from './triggers';

/**
 * Every trigger of a project in one environment. The API lists triggers per pipeline, so this
 * reads the project's pipelines (up to 100) and each one's triggers.
 */
export function TriggersList() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const search = useSearch({ from: '/authed/o/$org/triggers' }) as { project?: string; env?: string };
  const navigate = useNavigate();
  const place = usePlace(org, search);
  const all = useQuery(
    environmentTriggersQuery({ organization: org, project: place.project, environment: place.env }),
  );
  return (
    <div className="space-y-4">
      <PageHeader
        title="Triggers"
        subtitle="Schedules and webhooks of every pipeline of a project in one environment."
      />
      <PlacePicker
        projects={place.projects.data?.projects ?? []}
        environments={place.envs.data?.environments ?? []}
        project={place.project}
        env={place.env}
        onChange={(p) => navigate({ to: '/o/$org/triggers', params: { org }, search: p })}
      />
      <Card>
        <ErrorNote error={all.error} />
        {all.data?.length === 0 ? (
          <Empty>No trigger here: add one from a pipeline's Triggers tab.</Empty>
        ) : (
          <table className={tableClass}>
            <caption className="sr-only">Triggers by pipeline</caption>
            <thead>
              <tr>
                {['Trigger', 'Pipeline', 'Kind', 'State', 'When', 'Next fire', 'Last occurrence'].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {all.data?.map((t) => (
                <tr key={`${t.pipeline_slug}/${t.slug}`} data-trigger={t.slug}>
                  <td className={tdClass}>
                    <Link
                      to="/o/$org/pipelines/$project/$pipeline/triggers/$trigger"
                      params={{ org, project: place.project!, pipeline: t.pipeline_slug, trigger: t.slug }}
                      search={{ env: place.env }}
                      className="text-blue-700 hover:underline dark:text-blue-300"
                    >
                      {t.name}
                    </Link>
                  </td>
                  <td className={`${tdClass} font-mono text-xs`}>{t.pipeline_slug}</td>
                  <td className={tdClass}>{t.kind}</td>
                  <td className={tdClass}>{triggerState(t)}</td>
                  <td className={`${tdClass} font-mono text-xs`}>
                    {t.schedule ? `${t.schedule.cron} (${t.schedule.time_zone})` : 'webhook'}
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
