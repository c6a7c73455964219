import { queryOptions } from '@tanstack/react-query';
import { type BodyOf, client, type Ok, unwrap } from '../api';
import type { ProjectPath } from './places';

export type Contract = Ok<'getProjectsContracts'>;
export type Revision = Ok<'listProjectsContractsRevisions'>['revisions'][number];
export type ContractPath = ProjectPath & { contract_slug: string };
type Page = { cursor?: string; direction?: string };

export const contractKeys = {
  all: (org: string) => ['contracts', org] as const,
  list: (p: Partial<ProjectPath>, page: Page) =>
    [...contractKeys.all(p.organization ?? ''), 'list', p.project, page.cursor, page.direction] as const,
  one: (p: ContractPath) => [...contractKeys.all(p.organization), 'one', p.project, p.contract_slug] as const,
  revisions: (p: ContractPath) => [...contractKeys.one(p), 'revisions'] as const,
};

export const contractsQuery = (p: Partial<ProjectPath>, page: Page) =>
  queryOptions({
    queryKey: contractKeys.list(p, page),
    enabled: Boolean(p.project),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/projects/{project}/contracts', {
          params: {
            path: p as ProjectPath,
            query: {
              limit: 50,
              cursor: page.cursor,
              direction: page.direction as 'next' | 'prev' | undefined,
            },
          },
        }),
      ),
  });

export const contractQuery = (p: ContractPath) =>
  queryOptions({
    queryKey: contractKeys.one(p),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/projects/{project}/contracts/{contract_slug}', {
          params: { path: p },
        }),
      ),
  });

export const revisionsQuery = (p: ContractPath) =>
  queryOptions({
    queryKey: contractKeys.revisions(p),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/projects/{project}/contracts/{contract_slug}/revisions', {
          params: { path: p, query: { limit: 100 } },
        }),
      ),
  });

export const createContract = (p: ProjectPath, body: BodyOf<'createProjectsContracts'>) =>
  unwrap(
    client.POST('/organizations/{organization}/projects/{project}/contracts', { params: { path: p }, body }),
  );

export const createRevision = (p: ContractPath, body: BodyOf<'createProjectsContractsRevisions'>) =>
  unwrap(
    client.POST('/organizations/{organization}/projects/{project}/contracts/{contract_slug}/revisions', {
      params: { path: p },
      body,
    }),
  );

/** A revision as an ODCS document (docs/drift-and-contracts.md), for download. */
export const fetchOdcs = (p: ContractPath, revision_slug: string) =>
  unwrap(
    client.GET(
      '/organizations/{organization}/projects/{project}/contracts/{contract_slug}/revisions/{revision_slug}',
      {
        params: { path: { ...p, revision_slug }, query: { format: 'odcs' } },
      },
    ),
  );
