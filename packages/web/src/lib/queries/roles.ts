import { queryOptions } from '@tanstack/react-query';
import { type BodyOf, client, unwrap } from '../api';
import { allPages } from './places';

export const roleKeys = {
  all: (org: string) => ['roles', org] as const,
  permissions: ['permissions'] as const,
};

/** Every role of the organization, built in first, for role pickers. */
export const rolesQuery = (org: string) =>
  queryOptions({
    queryKey: roleKeys.all(org),
    queryFn: async () =>
      (
        await allPages(
          (cursor) =>
            unwrap(
              client.GET('/organizations/{organization}/roles', {
                params: { path: { organization: org }, query: { limit: 100, cursor } },
              }),
            ),
          (p) => p.roles,
        )
      ).sort((a, b) => Number(b.built_in) - Number(a.built_in)),
  });

export const permissionsQuery = () =>
  queryOptions({ queryKey: roleKeys.permissions, queryFn: () => unwrap(client.GET('/permissions')) });

export const saveRole = (org: string, existing: string | null, body: BodyOf<'createRoles'>) =>
  unwrap(
    existing
      ? client.PATCH('/organizations/{organization}/roles/{role_slug}', {
          params: { path: { organization: org, role_slug: existing } },
          body,
        })
      : client.POST('/organizations/{organization}/roles', { params: { path: { organization: org } }, body }),
  );

export const deleteRole = (org: string, role_slug: string) =>
  unwrap(
    client.DELETE('/organizations/{organization}/roles/{role_slug}', {
      params: { path: { organization: org, role_slug } },
    }),
  );
