import { queryOptions } from '@tanstack/react-query';
import { type BodyOf, client, type Ok, type QueryOf, unwrap } from '../api';
import type { PipelinePath, ProjectPath } from './places';

export type DriftReport = Ok<'getProjectsDriftReports'>;
export type DriftPreview = Ok<'createProjectsPipelinesDriftPreview'>;
type Page = { order?: string; cursor?: string; direction?: string };

export const driftKeys = {
  all: (org: string) => ['drift-reports', org] as const,
  list: (p: Partial<ProjectPath>, page: Page) =>
    [...driftKeys.all(p.organization ?? ''), 'project', p.project, page] as const,
  one: (p: ProjectPath, report: string) =>
    [...driftKeys.all(p.organization), 'one', p.project, report] as const,
  ofDataSource: (org: string, ds: string, page: Page) =>
    [...driftKeys.all(org), 'data-source', ds, page] as const,
};

export const driftReportsQuery = (p: Partial<ProjectPath>, page: Page) =>
  queryOptions({
    queryKey: driftKeys.list(p, page),
    enabled: Boolean(p.project),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/projects/{project}/drift-reports', {
          params: {
            path: p as ProjectPath,
            query: { limit: 50, ...page } as QueryOf<'listProjectsDriftReports'>,
          },
        }),
      ),
  });

export const driftReportQuery = (p: ProjectPath, report_slug: string) =>
  queryOptions({
    queryKey: driftKeys.one(p, report_slug),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/projects/{project}/drift-reports/{report_slug}', {
          params: { path: { ...p, report_slug } },
        }),
      ),
  });

export const dataSourceDriftQuery = (org: string, data_source: string, page: Page) =>
  queryOptions({
    queryKey: driftKeys.ofDataSource(org, data_source, page),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/data-sources/{data_source}/drift-reports', {
          params: {
            path: { organization: org, data_source },
            query: { limit: 50, ...page } as QueryOf<'listDataSourcesDriftReports'>,
          },
        }),
      ),
  });

export const previewDrift = (p: PipelinePath, body: BodyOf<'createProjectsPipelinesDriftPreview'>) =>
  unwrap(
    client.POST('/organizations/{organization}/projects/{project}/pipelines/{pipeline}/drift-preview', {
      params: { path: p },
      body,
    }),
  );
