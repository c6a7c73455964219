import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { lazy, Suspense, useMemo } from 'react';
import { LogView } from '../components/log-view';
import {
  Button,
  Card,
  ErrorNote,
  PageHeader,
  StateBadge,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';
import {
  formatBytes,
  formatCount,
  formatDuration,
  formatTime,
  formatTrigger,
  shortHash,
  terminal,
} from '../lib/format';
import { versionQuery } from '../lib/queries/pipelines';
import { cancelRun, logStreamUrl, type RunPath, runQuery } from '../lib/queries/runs';
import { useEventStream } from '../lib/sse';
import { type Run, specOf } from '../lib/types';

const Dag = lazy(() => import('../components/dag').then((m) => ({ default: m.Dag })));

function Timeline({ run }: { run: Run }) {
  const start = Date.parse(run.started_at ?? run.created_at);
  const end = run.finished_at ? Date.parse(run.finished_at) : Date.now();
  const span = Math.max(1, end - start);
  const bar: Record<string, string> = {
    running: 'bg-blue-500',
    succeeded: 'bg-emerald-500',
    failed: 'bg-red-500',
    canceled: 'bg-zinc-500',
    pending: 'bg-slate-300 dark:bg-slate-700',
    skipped: 'bg-zinc-300',
  };
  return (
    <ol className="space-y-1.5" aria-label="Step timeline">
      {run.steps.map((s) => {
        const from = s.started_at ? Date.parse(s.started_at) : null;
        const to = s.finished_at ? Date.parse(s.finished_at) : end;
        const left = from === null ? 0 : ((from - start) / span) * 100;
        const width = from === null ? 0 : Math.max(1, ((to - from) / span) * 100);
        return (
          <li key={s.step_slug} className="grid grid-cols-[10rem_1fr_5rem] items-center gap-2 text-xs">
            <span className="truncate font-mono">{s.step_slug}</span>
            <span className="relative h-3 rounded bg-slate-100 dark:bg-slate-800">
              <span
                className={`absolute top-0 h-3 rounded ${bar[s.state] ?? bar.pending}`}
                style={{ left: `${left}%`, width: `${width}%` }}
              />
            </span>
            <span className="text-right">{formatDuration(s.started_at, s.finished_at)}</span>
          </li>
        );
      })}
    </ol>
  );
}

export function RunDetail() {
  const { org, project, env, run: slug } = useParams({ from: '/authed/o/$org/runs/$project/$env/$run' });
  const search = useSearch({ from: '/authed/o/$org/runs/$project/$env/$run' });
  const navigate = useNavigate({ from: '/o/$org/runs/$project/$env/$run' });
  // One object per run, so the log view's effects see a change only when the run changes.
  const at = useMemo<RunPath>(
    () => ({ organization: org, project, environment: env, run_slug: slug }),
    [org, project, env, slug],
  );
  const qc = useQueryClient();
  const one = runQuery(at);
  const run = useQuery(one);
  const r = run.data;
  const version = useQuery({
    ...versionQuery({ organization: org, project, pipeline: r?.pipeline_slug ?? '' }, r?.spec_hash ?? ''),
    enabled: Boolean(r),
  });
  // The run itself arrives on the log stream (one connection per run page).
  const live = Boolean(r && !terminal(r.state));
  useEventStream(live ? logStreamUrl(at, Number.MAX_SAFE_INTEGER) : null, {
    run: (next: Run) => qc.setQueryData(one.queryKey, next),
  });
  const cancel = useMutation({
    mutationFn: () => cancelRun(at),
    onSuccess: (next) => qc.setQueryData(one.queryKey, next),
  });
  const setSearch = (patch: Record<string, string | undefined>) =>
    navigate({
      search: (s: Record<string, string | undefined>) => ({ ...s, ...patch }),
      replace: true,
      hash: (h) => h ?? '',
    });

  return (
    <div className="space-y-4">
      <PageHeader
        title={
          <span className="flex items-center gap-2">
            <span className="font-mono">{slug}</span> {r && <StateBadge state={r.state} />}
          </span>
        }
        subtitle={
          r && (
            <>
              <Link
                to="/o/$org/pipelines/$project/$pipeline"
                params={{ org, project, pipeline: r.pipeline_slug }}
                search={{}}
                className="text-blue-700 underline dark:text-blue-300"
              >
                {r.pipeline_slug}
              </Link>{' '}
              in {env} · version <code>{shortHash(r.spec_hash)}</code> · {formatTrigger(r)} · created{' '}
              {formatTime(r.created_at)} · {formatDuration(r.started_at, r.finished_at)}
            </>
          )
        }
        actions={
          <>
            <Link
              to="/o/$org/runs"
              params={{ org }}
              search={{ project, env }}
              className="rounded-md px-3 py-1.5 text-sm hover:bg-slate-200 dark:hover:bg-slate-800"
            >
              All runs
            </Link>
            {r && !terminal(r.state) && (
              <Button
                variant="danger"
                onClick={() => cancel.mutate()}
                disabled={cancel.isPending || r.state === 'canceling'}
              >
                Cancel run
              </Button>
            )}
          </>
        }
      />
      <ErrorNote error={run.error ?? cancel.error} />
      {r?.error && (
        <div
          role="status"
          className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm dark:border-red-800 dark:bg-red-950"
        >
          <strong>{r.error.code}</strong>: {r.error.message}
        </div>
      )}
      {r && (
        <div className="grid gap-4 xl:grid-cols-2">
          <Card title="Graph">
            {version.data ? (
              <Suspense fallback={<div className="h-72" />}>
                <Dag
                  spec={specOf(version.data)}
                  states={Object.fromEntries(r.steps.map((s) => [s.step_slug, s.state]))}
                  label="Run graph coloured by step state"
                  onSelect={(step) => setSearch({ step: search.step === step ? undefined : step })}
                />
              </Suspense>
            ) : (
              <div className="h-72" />
            )}
          </Card>
          <Card title="Timeline">
            <Timeline run={r} />
          </Card>
        </div>
      )}
      {r && (
        <Card title="Steps">
          <table className={tableClass}>
            <thead>
              <tr>
                {['Step', 'State', 'Rows in', 'Rows out', 'Bytes in', 'Bytes out', 'Duration', 'Error'].map(
                  (h) => (
                    <th key={h} className={thClass} scope="col">
                      {h}
                    </th>
                  ),
                )}
              </tr>
            </thead>
            <tbody>
              {r.steps.map((s) => (
                <tr
                  key={s.step_slug}
                  className={search.step === s.step_slug ? 'bg-amber-50 dark:bg-amber-950' : ''}
                >
                  <td className={tdClass}>
                    <button
                      type="button"
                      className="font-mono text-blue-700 hover:underline dark:text-blue-300"
                      onClick={() =>
                        setSearch({ step: search.step === s.step_slug ? undefined : s.step_slug })
                      }
                    >
                      {s.step_slug}
                    </button>
                  </td>
                  <td className={tdClass}>
                    <StateBadge state={s.state} />
                  </td>
                  <td className={tdClass}>{formatCount(s.rows_in)}</td>
                  <td className={tdClass}>{formatCount(s.rows_out)}</td>
                  <td className={tdClass}>{formatBytes(s.bytes_in)}</td>
                  <td className={tdClass}>{formatBytes(s.bytes_out)}</td>
                  <td className={tdClass}>{formatDuration(s.started_at, s.finished_at)}</td>
                  <td className={tdClass}>{s.error ? `${s.error.code}: ${s.error.message}` : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Card>
      )}
      <Card title={search.step ? `Log of step ${search.step}` : 'Log'}>
        {r && (
          <LogView
            run={at}
            level={search.level}
            q={search.q}
            step={search.step}
            live={!terminal(r.state)}
            onFilter={setSearch}
          />
        )}
      </Card>
    </div>
  );
}
