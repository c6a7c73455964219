import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { useState } from 'react';
import { PlacePicker } from '../components/place-picker';
import {
  Card,
  CursorPager,
  Empty,
  ErrorNote,
  PageHeader,
  Select,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';

import { formatTime } from '../lib/format';
import { useProjects } from '../lib/hooks';
import { dataSourceDriftQuery, driftReportQuery, driftReportsQuery } from '../lib/queries/drift';
import { DriftPreviewCard } from './drift-preview';
import { type DriftReport, ReportBody, SeverityBadge } from './drift-report';

type ListSearch = { project?: string; order?: string; cursor?: string; direction?: string };

function ReportsTable(props: { org: string; reports: DriftReport[]; showSubject?: boolean }) {
  return (
    <table className={tableClass}>
      <caption className="sr-only">Drift reports, newest first</caption>
      <thead>
        <tr>
          {[
            'Report',
            'Severity',
            'Status',
            props.showSubject ? 'Subject' : 'Project',
            'Created',
            'Summary',
          ].map((h) => (
            <th key={h} scope="col" className={thClass}>
              {h}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.reports.map((r) => (
          <tr key={r.slug} data-report={r.slug}>
            <td className={`${tdClass} font-mono text-xs`}>
              {r.project_slug ? (
                <Link
                  to="/o/$org/drift/$project/$report"
                  params={{ org: props.org, project: r.project_slug, report: r.slug }}
                  className="text-blue-700 hover:underline dark:text-blue-300"
                >
                  {r.slug}
                </Link>
              ) : (
                r.slug
              )}
            </td>
            <td className={tdClass}>
              <SeverityBadge severity={r.severity} />
            </td>
            <td className={`${tdClass} text-xs`}>{r.status}</td>
            <td className={`${tdClass} text-xs`}>
              {props.showSubject
                ? (r.data_source_slug ?? r.pipeline_slug ?? '—')
                : (r.project_slug ?? 'no bound pipeline')}
            </td>
            <td className={`${tdClass} whitespace-nowrap text-xs`}>{formatTime(r.created_at)}</td>
            <td className={`${tdClass} text-xs`}>{r.summary}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Drift reports of a project, newest first; the project, order and cursor are in the URL. */
export function DriftList() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const search = useSearch({ from: '/authed/o/$org/drift' }) as ListSearch;
  const navigate = useNavigate();
  const projects = useProjects(org);
  const project = search.project ?? projects.data?.projects[0]?.slug;
  const list = useQuery(
    driftReportsQuery(
      { organization: org, project },
      { order: search.order, cursor: search.cursor, direction: search.direction },
    ),
  );
  const set = (patch: Partial<ListSearch>) =>
    navigate({
      to: '/o/$org/drift',
      params: { org },
      search: { ...search, cursor: undefined, direction: undefined, ...patch },
    });
  return (
    <div className="space-y-4">
      <PageHeader
        title="Drift reports"
        subtitle="Schema changes of data sources and contracts, and which step, edge and sink they break."
      />
      <div className="flex flex-wrap items-end gap-3">
        <PlacePicker
          projects={projects.data?.projects ?? []}
          project={project}
          onChange={(p) => set({ project: p.project })}
        />
        <div>
          <label
            htmlFor="drift-order"
            className="block text-xs font-medium text-slate-600 dark:text-slate-400"
          >
            Order
          </label>
          <Select
            id="drift-order"
            value={search.order ?? 'desc'}
            onChange={(e) => set({ order: e.target.value })}
          >
            <option value="desc">Newest first</option>
            <option value="asc">Oldest first</option>
          </Select>
        </div>
      </div>
      <Card>
        <ErrorNote error={list.error} />
        {list.data?.reports.length === 0 ? (
          <Empty>No drift report in this project.</Empty>
        ) : (
          list.data && <ReportsTable org={org} reports={list.data.reports} showSubject />
        )}
        <CursorPager page={list.data} cursor={search.cursor} go={set} />
      </Card>
      {project && <DriftPreviewCard org={org} project={project} />}
    </div>
  );
}

/** One report: its status, summary, changes and impacts. */
export function DriftReportPage() {
  const { org, project, report } = useParams({ from: '/authed/o/$org/drift/$project/$report' });
  const one = useQuery(driftReportQuery({ organization: org, project }, report));
  const r = one.data;
  return (
    <div className="space-y-4">
      <p className="text-sm">
        <Link
          to="/o/$org/drift"
          params={{ org }}
          search={{ project }}
          className="text-blue-700 hover:underline dark:text-blue-300"
        >
          ← Drift reports of {project}
        </Link>
      </p>
      <ErrorNote error={one.error} />
      {r && (
        <>
          <PageHeader
            title={`Drift report ${r.slug}`}
            subtitle={r.summary}
            actions={
              <span className="flex items-center gap-2 text-sm">
                <SeverityBadge severity={r.severity} /> {r.status}
              </span>
            }
          />
          <Card title="About">
            <dl className="grid grid-cols-[max-content_1fr] gap-x-6 gap-y-1 text-sm">
              <dt className="font-medium text-slate-600 dark:text-slate-400">Made by</dt>
              <dd>{r.report_type === 'source_schema' ? 'a schema import' : 'a contract revision'}</dd>
              <dt className="font-medium text-slate-600 dark:text-slate-400">Subject</dt>
              <dd>
                {r.data_source_slug ? (
                  <Link
                    to="/o/$org/data-sources/$ds"
                    params={{ org, ds: r.data_source_slug }}
                    search={{ tab: 'drift' }}
                    className="text-blue-700 hover:underline dark:text-blue-300"
                  >
                    data source {r.data_source_slug}
                  </Link>
                ) : (
                  `pipeline ${r.pipeline_slug ?? '—'}`
                )}
              </dd>
              <dt className="font-medium text-slate-600 dark:text-slate-400">Created</dt>
              <dd>{formatTime(r.created_at)}</dd>
              <dt className="font-medium text-slate-600 dark:text-slate-400">Superseded</dt>
              <dd>{r.superseded_at ? formatTime(r.superseded_at) : '—'}</dd>
            </dl>
          </Card>
          <ReportBody report={r} />
        </>
      )}
    </div>
  );
}

/** The drift tab of a data source: every report on it, in every project. */
export function DataSourceDriftPanel(props: { org: string; ds: string }) {
  const [cursor, setCursor] = useState<{ cursor?: string; direction?: string }>({});
  const list = useQuery(dataSourceDriftQuery(props.org, props.ds, cursor));
  return (
    <Card title="Drift reports">
      <ErrorNote error={list.error} />
      {list.data?.reports.length === 0 ? (
        <Empty>No drift report yet: one is written when a schema import changes the schema.</Empty>
      ) : (
        list.data && <ReportsTable org={props.org} reports={list.data.reports} />
      )}
      <CursorPager page={list.data} cursor={cursor.cursor} go={setCursor} />
    </Card>
  );
}
