import { useQuery } from '@tanstack/react-query';
import { api, type Page } from './api';
import type { Environment, Organization, Project } from './types';

export const useOrganizations = () =>
  useQuery({
    queryKey: ['organizations'],
    queryFn: () => api.get<Page<'organizations', Organization>>('/organizations', { limit: 100 }),
  });

export const useProjects = (org: string) =>
  useQuery({
    queryKey: ['projects', org],
    queryFn: () => api.get<Page<'projects', Project>>(`/organizations/${org}/projects`, { limit: 100 }),
  });

export const useProjectEnvironments = (org: string, project: string | undefined) =>
  useQuery({
    queryKey: ['project-envs', org, project],
    enabled: Boolean(project),
    queryFn: () =>
      api.get<Page<'environments', Environment>>(`/organizations/${org}/projects/${project}/environments`, {
        limit: 100,
      }),
  });

export const useEnvironments = (org: string) =>
  useQuery({
    queryKey: ['environments', org],
    queryFn: () =>
      api.get<Page<'environments', Environment>>(`/organizations/${org}/environments`, { limit: 100 }),
  });

/** The project and environment a screen works in: from the URL, else the first / default one. */
export function usePlace(org: string, search: { project?: string; env?: string }) {
  const projects = useProjects(org);
  const project = search.project ?? projects.data?.projects[0]?.slug;
  const envs = useProjectEnvironments(org, project);
  const list = envs.data?.environments ?? [];
  const env = search.env ?? (list.find((e) => e.is_default) ?? list[0])?.slug;
  return { projects, envs, project, env, environment: list.find((e) => e.slug === env) };
}
