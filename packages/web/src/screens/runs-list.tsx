import { type InfiniteData, useInfiniteQuery, useQueries, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef } from 'react';
import { PlacePicker } from '../components/place-picker';
import { Empty, ErrorNote, PageHeader, Select, StateBadge, tdClass, thClass } from '../components/ui';
import { scrollRegion } from '../lib/a11y';
import type { Ok } from '../lib/api';
import { formatBytes, formatCount, formatDuration, formatTime, formatTrigger } from '../lib/format';
import { usePlace } from '../lib/hooks';
import { versionQuery } from '../lib/queries/pipelines';
import { runsQuery, runsStreamUrl } from '../lib/queries/runs';
import { useEventStream } from '../lib/sse';
import { specOf, type Version } from '../lib/types';

const STATES = ['queued', 'running', 'canceling', 'succeeded', 'failed', 'canceled'];
const ROW = 40;
type RunPages = InfiniteData<Ok<'listProjectsEnvironmentsRuns'>>;
type ListedRun = Ok<'listProjectsEnvironmentsRuns'>['runs'][number];

/**
 * What a run wrote: the rows and bytes its sink steps report (`rows_out`/`bytes_out` of a sink,
 * docs/pipeline-spec.md); a source's or a transform's counters are not added, so a 5,000-row copy
 * shows 5,000. Null until the spec of the version it ran says which steps are sinks.
 */
const written = (r: ListedRun, sinks: Set<string> | undefined) =>
  sinks
    ? r.steps
        .filter((s) => sinks.has(s.step_slug))
        .reduce((a, s) => ({ rows: a.rows + s.rows_out, bytes: a.bytes + s.bytes_out }), {
          rows: 0,
          bytes: 0,
        })
    : null;

const sinkSteps = (v: Version) =>
  new Set(
    specOf(v)
      .steps.filter((s) => s.kind === 'sink')
      .map((s) => s.slug),
  );
const versionKey = (r: Pick<ListedRun, 'pipeline_slug' | 'spec_hash'>) => `${r.pipeline_slug}@${r.spec_hash}`;

/** Runs of one environment, newest first: server pages by cursor, rows virtualised, state live. */
export function RunsList() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const search = useSearch({ from: '/authed/o/$org/runs' });
  const navigate = useNavigate({ from: '/o/$org/runs' });
  const place = usePlace(org, search);
  const pe =
    place.project && place.env ? { organization: org, project: place.project, environment: place.env } : null;
  const filter = { state: search.state, pipeline_slug: search.pipeline };
  const list = runsQuery({ organization: org, project: place.project, environment: place.env }, filter);
  const key = list.queryKey;
  const qc = useQueryClient();

  const runs = useInfiniteQuery(list);

  // Live: the stream sends runs that changed; patch them in place, put new ones on top.
  useEventStream(pe ? runsStreamUrl(pe, filter) : null, {
    runs: (changed: ListedRun[]) =>
      qc.setQueryData(key, (old: RunPages | undefined) => {
        if (!old) return old;
        const bySlug = new Map(changed.map((r) => [r.slug, r]));
        const pages = old.pages.map((p) => ({
          ...p,
          runs: p.runs.map((r) => {
            const next = bySlug.get(r.slug);
            if (next) bySlug.delete(r.slug);
            return next ?? r;
          }),
        }));
        const fresh = [...bySlug.values()].sort((a, b) => b.created_at.localeCompare(a.created_at));
        if (fresh.length > 0 && pages[0]) pages[0] = { ...pages[0], runs: [...fresh, ...pages[0].runs] };
        return { ...old, pages };
      }),
  });

  const rows = runs.data?.pages.flatMap((p) => p.runs) ?? [];
  // One read per version the listed runs ran (immutable, so cached for good).
  const versions = [...new Map(rows.map((r) => [versionKey(r), r])).values()];
  const sinks = useQueries({
    queries: versions.map((r) =>
      versionQuery(
        { organization: org, project: place.project ?? '', pipeline: r.pipeline_slug },
        r.spec_hash,
      ),
    ),
    combine: (results) =>
      new Map(
        results.flatMap((q, i) => (q.data ? [[versionKey(versions[i]), sinkSteps(q.data)] as const] : [])),
      ),
  });
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW,
    overscan: 10,
  });
  const items = virtual.getVirtualItems();
  const lastIndex = items.at(-1)?.index ?? 0;
  // Rows outside the window are replaced by two spacer rows, so the table keeps its real height.
  const padTop = items[0]?.start ?? 0;
  const padBottom = items.length ? virtual.getTotalSize() - items[items.length - 1].end : 0;
  useEffect(() => {
    if (lastIndex >= rows.length - 20 && runs.hasNextPage && !runs.isFetchingNextPage)
      void runs.fetchNextPage();
  }, [lastIndex, rows.length, runs]);

  const setSearch = (patch: Record<string, string | undefined>) =>
    navigate({ search: (s: Record<string, string | undefined>) => ({ ...s, ...patch }), replace: true });

  return (
    <div>
      <PageHeader title="Runs" subtitle="Live: state, rows and bytes update without reloading." />
      <div className="mb-3 flex flex-wrap items-end gap-3">
        <PlacePicker
          projects={place.projects.data?.projects ?? []}
          environments={place.envs.data?.environments ?? []}
          project={place.project}
          env={place.env}
          onChange={(p) => setSearch(p)}
        />
        <div>
          <label
            htmlFor="filter-state"
            className="block text-xs font-medium text-slate-600 dark:text-slate-400"
          >
            State
          </label>
          <Select
            id="filter-state"
            value={search.state ?? ''}
            onChange={(e) => setSearch({ state: e.target.value || undefined })}
          >
            <option value="">Any state</option>
            {STATES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </Select>
        </div>
      </div>
      <ErrorNote error={runs.error} />
      <div className="rounded-lg border border-slate-200 bg-white dark:border-slate-800 dark:bg-slate-900">
        {rows.length === 0 && !runs.isLoading ? (
          <Empty>No runs yet in this environment.</Empty>
        ) : (
          <div
            ref={scroller}
            data-testid="runs-scroller"
            {...scrollRegion}
            className="h-[calc(100vh-15rem)] min-h-64 overflow-auto"
          >
            <table className="w-full min-w-[46rem] table-fixed text-left text-sm">
              <caption className="sr-only">Runs, newest first</caption>
              <thead className="sticky top-0 z-10 bg-white dark:bg-slate-900">
                <tr>
                  {[
                    'Run',
                    'State',
                    'Pipeline',
                    'Trigger',
                    'Created',
                    'Duration',
                    'Rows written',
                    'Bytes written',
                  ].map((h) => (
                    <th key={h} scope="col" className={thClass}>
                      {h}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {padTop > 0 && (
                  <tr aria-hidden>
                    <td colSpan={8} style={{ height: padTop }} />
                  </tr>
                )}
                {items.map((v) => {
                  const r = rows[v.index];
                  const t = written(r, sinks.get(versionKey(r)));
                  return (
                    <tr key={r.slug} data-run={r.slug} style={{ height: ROW }}>
                      <td className={`${tdClass} truncate font-mono text-xs`}>
                        <Link
                          to="/o/$org/runs/$project/$env/$run"
                          params={{ org, project: place.project!, env: place.env!, run: r.slug }}
                          search={{}}
                          className="text-blue-700 hover:underline dark:text-blue-300"
                        >
                          {r.slug}
                        </Link>
                      </td>
                      <td className={tdClass}>
                        <StateBadge state={r.state} />
                      </td>
                      <td className={`${tdClass} truncate`}>{r.pipeline_slug}</td>
                      <td className={`${tdClass} truncate`}>{formatTrigger(r)}</td>
                      <td className={`${tdClass} truncate text-xs`}>{formatTime(r.created_at)}</td>
                      <td className={tdClass}>{formatDuration(r.started_at, r.finished_at)}</td>
                      <td className={tdClass}>{t ? formatCount(t.rows) : '…'}</td>
                      <td className={tdClass}>{t ? formatBytes(t.bytes) : '…'}</td>
                    </tr>
                  );
                })}
                {padBottom > 0 && (
                  <tr aria-hidden>
                    <td colSpan={8} style={{ height: padBottom }} />
                  </tr>
                )}
              </tbody>
            </table>
          </div>
        )}
      </div>
      <p className="mt-2 text-xs text-slate-600 dark:text-slate-400" data-testid="runs-loaded">
        {formatCount(rows.length)} runs loaded{runs.hasNextPage ? ', more as you scroll' : ''}
      </p>
    </div>
  );
}
