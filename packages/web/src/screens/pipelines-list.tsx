import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { PlacePicker } from '../components/place-picker';
import { Card, Empty, ErrorNote, PageHeader, tableClass, tdClass, thClass } from '../components/ui';

import { formatTime, shortHash } from '../lib/format';
import { usePlace } from '../lib/hooks';
import { pipelinesQuery } from '../lib/queries/pipelines';

export function PipelinesList() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const search = useSearch({ from: '/authed/o/$org/pipelines' });
  const navigate = useNavigate({ from: '/o/$org/pipelines' });
  const place = usePlace(org, search);
  const list = useQuery(pipelinesQuery({ organization: org, project: place.project }));
  return (
    <div>
      <PageHeader
        title="Pipelines"
        actions={
          <Link
            to="/o/$org/pipelines/new"
            params={{ org }}
            search={{ project: place.project }}
            className="rounded-md bg-blue-600 px-3 py-1.5 text-sm font-medium text-white hover:bg-blue-700 dark:bg-blue-500 dark:text-slate-950"
          >
            New pipeline
          </Link>
        }
      />
      <div className="mb-3">
        <PlacePicker
          projects={place.projects.data?.projects ?? []}
          project={place.project}
          onChange={(p) => navigate({ search: { project: p.project } })}
        />
      </div>
      <ErrorNote error={list.error} />
      <Card>
        {list.data?.pipelines.length === 0 ? (
          <Empty>No pipelines in this project yet.</Empty>
        ) : (
          <table className={tableClass}>
            <thead>
              <tr>
                {['Pipeline', 'Slug', 'Latest version', 'Updated'].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {list.data?.pipelines.map((p) => (
                <tr key={p.slug}>
                  <td className={tdClass}>
                    <Link
                      to="/o/$org/pipelines/$project/$pipeline"
                      params={{ org, project: p.project_slug, pipeline: p.slug }}
                      search={{}}
                      className="font-medium text-blue-700 hover:underline dark:text-blue-300"
                    >
                      {p.name}
                    </Link>
                  </td>
                  <td className={`${tdClass} font-mono text-xs`}>{p.slug}</td>
                  <td className={`${tdClass} font-mono text-xs`}>{shortHash(p.latest_spec_hash)}</td>
                  <td className={tdClass}>{formatTime(p.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
    </div>
  );
}
