import { useQuery } from '@tanstack/react-query';
import {
  environmentsQuery,
  organizationsQuery,
  projectEnvironmentsQuery,
  projectsQuery,
} from './queries/organizations';

export const useOrganizations = () => useQuery(organizationsQuery());
export const useProjects = (org: string) => useQuery(projectsQuery(org));
export const useProjectEnvironments = (org: string, project: string | undefined) =>
  useQuery(projectEnvironmentsQuery(org, project));
export const useEnvironments = (org: string) => useQuery(environmentsQuery(org));

/** The project and environment a screen works in: from the URL, else the first / default one. */
export function usePlace(org: string, search: { project?: string; env?: string }) {
  const projects = useProjects(org);
  const project = search.project ?? projects.data?.projects[0]?.slug;
  const envs = useProjectEnvironments(org, project);
  const list = envs.data?.environments ?? [];
  const env = search.env ?? (list.find((e) => e.is_default) ?? list[0])?.slug;
  return { projects, envs, project, env, environment: list.find((e) => e.slug === env) };
}
