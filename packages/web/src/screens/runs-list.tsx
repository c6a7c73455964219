import { type InfiniteData, useInfiniteQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef } from 'react';
import { PlacePicker } from '../components/place-picker';
import { Empty, ErrorNote, PageHeader, Select, StateBadge, tdClass, thClass } from '../components/ui';
import { scrollRegion } from '../lib/a11y';
import { api, type Page, withQuery } from '../lib/api';
import { formatBytes, formatCount, formatDuration, formatTime, formatTrigger } from '../lib/format';
import { usePlace } from '../lib/hooks';
import { useEventStream } from '../lib/sse';
import type { Run } from '../lib/types';

const STATES = ['queued', 'running', 'canceling', 'succeeded', 'failed', 'canceled'];
const ROW = 40;
type RunPages = InfiniteData<Page<'runs', Run>, string | undefined>;

const totals = (r: Run) =>
  r.steps.reduce((a, s) => ({ rows: a.rows + (s.rows_out ?? 0), bytes: a.bytes + (s.bytes_out ?? 0) }), {
    rows: 0,
    bytes: 0,
  });

/** Runs of one environment, newest first: server pages by cursor, rows virtualised, state live. */
export function RunsList() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const search = useSearch({ from: '/authed/o/$org/runs' });
  const navigate = useNavigate({ from: '/o/$org/runs' });
  const place = usePlace(org, search);
  const pe =
    place.project && place.env
      ? `/organizations/${org}/projects/${place.project}/environments/${place.env}`
      : null;
  const filter = { state: search.state, pipeline_slug: search.pipeline };
  const key = ['runs', org, place.project, place.env, filter];
  const qc = useQueryClient();

  const runs = useInfiniteQuery({
    queryKey: key,
    enabled: Boolean(pe),
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      api.get<Page<'runs', Run>>(`${pe}/runs`, { limit: 100, cursor: pageParam, ...filter }),
    getNextPageParam: (last) => (last.has_more ? (last.next_cursor ?? undefined) : undefined),
  });

  // Live: the stream sends runs that changed; patch them in place, put new ones on top.
  useEventStream(pe ? withQuery(`/api${pe}/runs-stream`, filter) : null, {
    runs: (changed: Run[]) =>
      qc.setQueryData<RunPages>(key, (old) => {
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
                  {['Run', 'State', 'Pipeline', 'Trigger', 'Created', 'Duration', 'Rows', 'Bytes'].map(
                    (h) => (
                      <th key={h} scope="col" className={thClass}>
                        {h}
                      </th>
                    ),
                  )}
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
                  const t = totals(r);
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
                      <td className={tdClass}>{formatCount(t.rows)}</td>
                      <td className={tdClass}>{formatBytes(t.bytes)}</td>
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
