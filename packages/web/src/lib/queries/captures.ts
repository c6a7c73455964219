import { queryOptions } from '@tanstack/react-query';
import { client, type Ok, unwrap } from '../api';
import type { PipelinePath } from './places';

// Change data captures of a deployed pipeline (docs/cdc.md "Slot safety"): the sources are
// asked on every read, so the list refreshes on a timer rather than on focus alone.

export type PipelineCapture = Ok<'listPipelineCaptures'>['captures'][number];

export const captureKeys = {
  ofPipeline: (p: PipelinePath) => ['captures', p.organization, p.project, p.pipeline] as const,
};

export const pipelineCapturesQuery = (p: PipelinePath) =>
  queryOptions({
    queryKey: captureKeys.ofPipeline(p),
    refetchInterval: 60_000,
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/projects/{project}/pipelines/{pipeline}/captures', {
          params: { path: p, query: { limit: 100, order: 'asc' } },
        }),
      ),
  });
