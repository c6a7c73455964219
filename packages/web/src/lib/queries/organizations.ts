import { queryOptions } from '@tanstack/react-query';
import { type BodyOf, client, unwrap } from '../api';
import type { OrgPath, ProjectPath } from './places';

export const organizationKeys = {
  all: ['organizations'] as const,
  projects: (org: string) => ['projects', org] as const,
  projectEnvironments: (p: Partial<ProjectPath>) =>
    ['project-environments', p.organization, p.project] as const,
  environments: (org: string) => ['environments', org] as const,
  secrets: (p: OrgPath & { environment: string }) =>
    ['environment-secrets', p.organization, p.environment] as const,
};

export const fetchOrganizations = () =>
  unwrap(client.GET('/organizations', { params: { query: { limit: 100 } } }));

export const organizationsQuery = () =>
  queryOptions({ queryKey: organizationKeys.all, queryFn: fetchOrganizations });

export const projectsQuery = (org: string) =>
  queryOptions({
    queryKey: organizationKeys.projects(org),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/projects', {
          params: { path: { organization: org }, query: { limit: 100 } },
        }),
      ),
  });

export const projectEnvironmentsQuery = (org: string, project: string | undefined) =>
  queryOptions({
    queryKey: organizationKeys.projectEnvironments({ organization: org, project }),
    enabled: Boolean(project),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/projects/{project}/environments', {
          params: { path: { organization: org, project: project ?? '' }, query: { limit: 100 } },
        }),
      ),
  });

export const environmentsQuery = (org: string) =>
  queryOptions({
    queryKey: organizationKeys.environments(org),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/environments', {
          params: { path: { organization: org }, query: { limit: 100 } },
        }),
      ),
  });

export const environmentSecretsQuery = (p: OrgPath & { environment: string }) =>
  queryOptions({
    queryKey: organizationKeys.secrets(p),
    queryFn: async () =>
      (
        await unwrap(
          client.GET('/organizations/{organization}/environments/{environment}/secrets', {
            params: { path: p, query: { limit: 100 } },
          }),
        )
      ).environment_secrets,
  });

export const createEnvironment = (org: string, body: BodyOf<'createEnvironments'>) =>
  unwrap(
    client.POST('/organizations/{organization}/environments', {
      params: { path: { organization: org } },
      body,
    }),
  );

export const putEnvironmentSecret = (
  p: OrgPath & { environment: string },
  environment_secret_key: string,
  body: BodyOf<'putEnvironmentsSecrets'>,
) =>
  unwrap(
    client.PUT('/organizations/{organization}/environments/{environment}/secrets/{environment_secret_key}', {
      params: { path: { ...p, environment_secret_key } },
      body,
    }),
  );
