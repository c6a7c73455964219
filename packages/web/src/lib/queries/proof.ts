import { queryOptions } from '@tanstack/react-query';
import { ApiError, type BodyOf, client, type Ok, unwrap } from '../api';
import type { DataSourcePath } from './places';

export type ProofSettings = Ok<'getDataSourcesProofSettings'>;
export type ProofSettingsBody = BodyOf<'putDataSourcesProofSettings'>;
export type Observation = Ok<'getDataSourcesProofObservations'>;
export type Receipt = Ok<'getDataSourcesProofReceipts'>;

export const proofKeys = {
  all: (p: DataSourcePath) => ['proof', p.organization, p.data_source] as const,
  settings: (p: DataSourcePath) => [...proofKeys.all(p), 'settings'] as const,
  observations: (p: DataSourcePath) => [...proofKeys.all(p), 'observations'] as const,
  observationsOf: (p: DataSourcePath, slugs: string[] | undefined) =>
    [...proofKeys.observations(p), slugs] as const,
  receipts: (p: DataSourcePath) => [...proofKeys.all(p), 'receipts'] as const,
  receipt: (p: DataSourcePath, slug: string) => [...proofKeys.receipts(p), slug] as const,
};

const settingsPath = '/organizations/{organization}/data-sources/{data_source}/proof-settings';

/** The proof settings, or null when the data source's kind has none (404). */
export const proofSettingsQuery = (p: DataSourcePath) =>
  queryOptions({
    queryKey: proofKeys.settings(p),
    retry: false,
    queryFn: async (): Promise<ProofSettings | null> => {
      try {
        return await unwrap(client.GET(settingsPath, { params: { path: p } }));
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) return null;
        throw e;
      }
    },
  });

export const putProofSettings = (p: DataSourcePath, body: ProofSettingsBody) =>
  unwrap(client.PUT(settingsPath, { params: { path: p }, body }));

export const observationsQuery = (p: DataSourcePath) =>
  queryOptions({
    queryKey: proofKeys.observations(p),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/data-sources/{data_source}/proof-observations', {
          params: { path: p, query: { limit: 50 } },
        }),
      ),
  });

export const observationsOfQuery = (p: DataSourcePath, slugs: string[] | undefined) =>
  queryOptions({
    queryKey: proofKeys.observationsOf(p, slugs),
    enabled: Boolean(slugs),
    queryFn: () =>
      Promise.all(
        (slugs ?? []).map((observation_slug) =>
          unwrap(
            client.GET(
              '/organizations/{organization}/data-sources/{data_source}/proof-observations/{observation_slug}',
              {
                params: { path: { ...p, observation_slug } },
              },
            ),
          ),
        ),
      ),
  });

export const observeCommit = (p: DataSourcePath, body: BodyOf<'createDataSourcesProofObservations'>) =>
  unwrap(
    client.POST('/organizations/{organization}/data-sources/{data_source}/proof-observations', {
      params: { path: p },
      body,
    }),
  );

export const receiptsQuery = (p: DataSourcePath) =>
  queryOptions({
    queryKey: proofKeys.receipts(p),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/data-sources/{data_source}/proof-receipts', {
          params: { path: p, query: { limit: 50 } },
        }),
      ),
  });

export const receiptQuery = (p: DataSourcePath, receipt_slug: string) =>
  queryOptions({
    queryKey: proofKeys.receipt(p, receipt_slug),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/data-sources/{data_source}/proof-receipts/{receipt_slug}', {
          params: { path: { ...p, receipt_slug } },
        }),
      ),
  });

export const compileReceipt = (p: DataSourcePath, body: BodyOf<'createDataSourcesProofReceipts'>) =>
  unwrap(
    client.POST('/organizations/{organization}/data-sources/{data_source}/proof-receipts:compile', {
      params: { path: p },
      body,
    }),
  );
