import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { client, type QueryOf, unwrap } from '../api';
import type { EnvPath, EnvPipelinePath } from './places';

export type RunPath = EnvPath & { run_slug: string };
export type RunFilter = { state?: string; pipeline_slug?: string };
export type LogPage = { order: 'asc' | 'desc'; cursor?: string };

export const runKeys = {
  all: (org: string) => ['runs', org] as const,
  list: (p: Partial<EnvPath>, f: RunFilter) =>
    [...runKeys.all(p.organization ?? ''), 'list', p.project, p.environment, f] as const,
  one: (p: RunPath) => [...runKeys.all(p.organization), 'one', p.project, p.environment, p.run_slug] as const,
};

/** Runs of one environment, newest first, a page of 100 at a time. */
export const runsQuery = (p: Partial<EnvPath>, f: RunFilter) =>
  infiniteQueryOptions({
    queryKey: runKeys.list(p, f),
    enabled: Boolean(p.organization && p.project && p.environment),
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      unwrap(
        client.GET('/organizations/{organization}/projects/{project}/environments/{environment}/runs', {
          params: {
            path: p as EnvPath,
            query: { limit: 100, cursor: pageParam, ...f } as QueryOf<'listProjectsEnvironmentsRuns'>,
          },
        }),
      ),
    getNextPageParam: (last) => (last.has_more ? (last.next_cursor ?? undefined) : undefined),
  });

export const runQuery = (p: RunPath) =>
  queryOptions({
    queryKey: runKeys.one(p),
    queryFn: () =>
      unwrap(
        client.GET(
          '/organizations/{organization}/projects/{project}/environments/{environment}/runs/{run_slug}',
          { params: { path: p } },
        ),
      ),
  });

/** A page of a run's log lines (100), oldest or newest first from the cursor. */
export const fetchLogs = (p: RunPath, page: LogPage) =>
  unwrap(
    client.GET(
      '/organizations/{organization}/projects/{project}/environments/{environment}/runs/{run_slug}/logs',
      {
        params: { path: p, query: { limit: 100, ...page } },
      },
    ),
  );

export const cancelRun = (p: RunPath) =>
  unwrap(
    client.POST(
      '/organizations/{organization}/projects/{project}/environments/{environment}/runs/{run_slug}:cancel',
      {
        params: { path: p },
      },
    ),
  );

export const executePipeline = (
  p: EnvPipelinePath,
  confirm: { protected_environment_confirmation?: string },
) =>
  unwrap(
    client.POST(
      '/organizations/{organization}/projects/{project}/environments/{environment}/pipelines/{pipeline}:execute',
      {
        params: { path: p },
        body: confirm,
      },
    ),
  );

/** The app host's live streams (server-sent events beside the API, docs/app.md). */
export const runsStreamUrl = (p: EnvPath, f: RunFilter) =>
  withSearch(
    `/api/organizations/${p.organization}/projects/${p.project}/environments/${p.environment}/runs-stream`,
    f,
  );
export const logStreamUrl = (p: RunPath, afterId: number) =>
  withSearch(
    `/api/organizations/${p.organization}/projects/${p.project}/environments/${p.environment}/runs/${p.run_slug}/log-stream`,
    { after_id: String(afterId) },
  );

function withSearch(path: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v) params.set(k, v);
  const s = params.toString();
  return s ? `${path}?${s}` : path;
}
