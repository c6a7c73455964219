import { queryOptions } from '@tanstack/react-query';
import { type BodyOf, client, type QueryOf, unwrap } from '../api';

type ListFilter = Record<string, string | undefined>;

export const dataSourceKeys = {
  all: (org: string) => ['data-sources', org] as const,
  list: (org: string, f: ListFilter) => [...dataSourceKeys.all(org), 'list', f] as const,
  first100: (org: string) => [...dataSourceKeys.all(org), 'first-100'] as const,
  one: (org: string, slug: string) => [...dataSourceKeys.all(org), 'one', slug] as const,
  connectors: ['connectors'] as const,
};

const orgPath = (org: string) => ({ path: { organization: org } });
const onePath = (org: string, data_source: string) => ({
  params: { path: { organization: org, data_source } },
});

export const dataSourcesQuery = (org: string, f: ListFilter) =>
  queryOptions({
    queryKey: dataSourceKeys.list(org, f),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/data-sources', {
          params: { ...orgPath(org), query: { limit: 25, ...f } as QueryOf<'listDataSources'> },
        }),
      ),
  });

/** The first 100 data sources, for pickers. */
export const dataSourcePickerQuery = (org: string) =>
  queryOptions({
    queryKey: dataSourceKeys.first100(org),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/data-sources', {
          params: { ...orgPath(org), query: { limit: 100 } },
        }),
      ),
  });

export const dataSourceQuery = (org: string, slug: string) =>
  queryOptions({
    queryKey: dataSourceKeys.one(org, slug),
    queryFn: () =>
      unwrap(client.GET('/organizations/{organization}/data-sources/{data_source}', onePath(org, slug))),
  });

export const connectorsQuery = () =>
  queryOptions({
    queryKey: dataSourceKeys.connectors,
    staleTime: Number.POSITIVE_INFINITY,
    queryFn: () => unwrap(client.GET('/connectors')),
  });

export const createDataSource = (org: string, body: BodyOf<'createDataSources'>) =>
  unwrap(client.POST('/organizations/{organization}/data-sources', { params: orgPath(org), body }));

export const updateDataSource = (org: string, slug: string, body: BodyOf<'updateDataSources'>) =>
  unwrap(
    client.PATCH('/organizations/{organization}/data-sources/{data_source}', { ...onePath(org, slug), body }),
  );

export const testDataSource = (org: string, slug: string) =>
  unwrap(
    client.POST(
      '/organizations/{organization}/data-sources/{data_source}/test-connection',
      onePath(org, slug),
    ),
  );

export const importSchema = (org: string, slug: string) =>
  unwrap(
    client.POST('/organizations/{organization}/data-sources/{data_source}/schema-import', onePath(org, slug)),
  );
