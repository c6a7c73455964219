import { queryOptions } from '@tanstack/react-query';
import { type BodyOf, client, type Ok, unwrap } from '../api';
import type { Confirm, EnvPath, EnvPipelinePath, PipelinePath, ProjectPath } from './places';

export type Checkpoint = Ok<'listProjectsEnvironmentsPipelinesCheckpoints'>['checkpoints'][number];

export const pipelineKeys = {
  all: (org: string) => ['pipelines', org] as const,
  list: (p: Partial<ProjectPath>) => [...pipelineKeys.all(p.organization ?? ''), 'list', p.project] as const,
  everyProject: (org: string, projects: string[]) =>
    [...pipelineKeys.all(org), 'every-project', projects] as const,
  one: (p: PipelinePath) => [...pipelineKeys.all(p.organization), 'one', p.project, p.pipeline] as const,
  versions: (p: PipelinePath) => [...pipelineKeys.one(p), 'versions'] as const,
  version: (p: PipelinePath, hash: string) => [...pipelineKeys.versions(p), hash] as const,
  refs: (p: PipelinePath) => [...pipelineKeys.one(p), 'refs'] as const,
  inEnvironment: (p: EnvPipelinePath) => [...pipelineKeys.one(p), 'environment', p.environment] as const,
  bindings: (p: EnvPipelinePath) => [...pipelineKeys.inEnvironment(p), 'bindings'] as const,
  deployments: (p: EnvPipelinePath) => [...pipelineKeys.inEnvironment(p), 'deployments'] as const,
  checkpoints: (p: EnvPipelinePath) => [...pipelineKeys.inEnvironment(p), 'checkpoints'] as const,
};

export const fetchPipelines = (p: ProjectPath) =>
  unwrap(
    client.GET('/organizations/{organization}/projects/{project}/pipelines', {
      params: { path: p, query: { limit: 100 } },
    }),
  );

export const pipelinesQuery = (p: Partial<ProjectPath>) =>
  queryOptions({
    queryKey: pipelineKeys.list(p),
    enabled: Boolean(p.organization && p.project),
    queryFn: () => fetchPipelines(p as ProjectPath),
  });

/** The pipelines of every given project (the command palette). */
export const everyProjectPipelinesQuery = (org: string, projects: string[]) =>
  queryOptions({
    queryKey: pipelineKeys.everyProject(org, projects),
    queryFn: async () =>
      (await Promise.all(projects.map((project) => fetchPipelines({ organization: org, project })))).flatMap(
        (page) => page.pipelines,
      ),
  });

export const pipelineQuery = (p: PipelinePath) =>
  queryOptions({
    queryKey: pipelineKeys.one(p),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/projects/{project}/pipelines/{pipeline}', {
          params: { path: p },
        }),
      ),
  });

export const versionsQuery = (p: PipelinePath) =>
  queryOptions({
    queryKey: pipelineKeys.versions(p),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/projects/{project}/pipelines/{pipeline}/versions', {
          params: { path: p, query: { limit: 100 } },
        }),
      ),
  });

export const versionQuery = (p: PipelinePath, spec_hash: string) =>
  queryOptions({
    queryKey: pipelineKeys.version(p, spec_hash),
    staleTime: Number.POSITIVE_INFINITY,
    queryFn: () =>
      unwrap(
        client.GET(
          '/organizations/{organization}/projects/{project}/pipelines/{pipeline}/versions/{spec_hash}',
          {
            params: { path: { ...p, spec_hash } },
          },
        ),
      ),
  });

export const createPipeline = (p: ProjectPath, body: BodyOf<'createProjectsPipelines'>) =>
  unwrap(
    client.POST('/organizations/{organization}/projects/{project}/pipelines', { params: { path: p }, body }),
  );

export const pushVersion = (p: PipelinePath, spec: unknown) =>
  unwrap(
    client.POST('/organizations/{organization}/projects/{project}/pipelines/{pipeline}/versions', {
      params: { path: p },
      body: { spec } as BodyOf<'createProjectsPipelinesVersions'>,
    }),
  );

export const refsQuery = (p: PipelinePath) =>
  queryOptions({
    queryKey: pipelineKeys.refs(p),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/projects/{project}/pipelines/{pipeline}/data-source-refs', {
          params: { path: p, query: { limit: 100 } },
        }),
      ),
  });

const envPath = (p: EnvPipelinePath): EnvPath => ({
  organization: p.organization,
  project: p.project,
  environment: p.environment,
});

export const bindingsQuery = (p: EnvPipelinePath) =>
  queryOptions({
    queryKey: pipelineKeys.bindings(p),
    enabled: Boolean(p.environment),
    queryFn: () =>
      unwrap(
        client.GET(
          '/organizations/{organization}/projects/{project}/environments/{environment}/data-source-bindings',
          {
            params: { path: envPath(p), query: { pipeline_slug: p.pipeline, limit: 100 } },
          },
        ),
      ),
  });

export const bindDataSource = (p: EnvPipelinePath, ref: string, dataSource: string, confirm: Confirm) =>
  unwrap(
    client.PUT(
      '/organizations/{organization}/projects/{project}/environments/{environment}/pipelines/{pipeline}/data-source-bindings/{data_source_ref_slug}',
      {
        params: { path: { ...p, data_source_ref_slug: ref }, query: confirm },
        body: { data_source_slug: dataSource },
      },
    ),
  );

export const deploymentsQuery = (p: EnvPipelinePath) =>
  queryOptions({
    queryKey: pipelineKeys.deployments(p),
    enabled: Boolean(p.environment),
    queryFn: () =>
      unwrap(
        client.GET(
          '/organizations/{organization}/projects/{project}/environments/{environment}/deployments',
          {
            params: { path: envPath(p), query: { pipeline_slug: p.pipeline, limit: 20 } },
          },
        ),
      ),
  });

export const validatePipeline = (p: EnvPipelinePath, spec_hash: string) =>
  unwrap(
    client.POST(
      '/organizations/{organization}/projects/{project}/environments/{environment}/pipeline-validation',
      {
        params: { path: envPath(p) },
        body: { pipeline_slug: p.pipeline, spec_hash },
      },
    ),
  );

export const deployPipeline = (p: EnvPipelinePath, spec_hash: string, confirm: Confirm) =>
  unwrap(
    client.POST(
      '/organizations/{organization}/projects/{project}/environments/{environment}/pipelines/{pipeline}:deploy',
      {
        params: { path: p },
        body: { spec_hash, ...confirm },
      },
    ),
  );

export const checkpointsQuery = (p: EnvPipelinePath) =>
  queryOptions({
    queryKey: pipelineKeys.checkpoints(p),
    enabled: Boolean(p.environment),
    queryFn: () =>
      unwrap(
        client.GET(
          '/organizations/{organization}/projects/{project}/environments/{environment}/pipelines/{pipeline}/checkpoints',
          {
            params: { path: p },
          },
        ),
      ),
  });

export const resetCheckpoints = (p: EnvPipelinePath, confirm: Confirm) =>
  unwrap(
    client.DELETE(
      '/organizations/{organization}/projects/{project}/environments/{environment}/pipelines/{pipeline}/checkpoints',
      {
        params: { path: p, query: confirm },
      },
    ),
  );
