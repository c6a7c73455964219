import { queryOptions } from '@tanstack/react-query';
import { client, type QueryOf, unwrap } from '../api';

export const memberKeys = {
  all: (org: string) => ['members', org] as const,
  list: (org: string, page: { cursor?: string; direction?: string }) =>
    [...memberKeys.all(org), page.cursor, page.direction] as const,
};

export const membersQuery = (org: string, page: { cursor?: string; direction?: string }) =>
  queryOptions({
    queryKey: memberKeys.list(org, page),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/members', {
          params: { path: { organization: org }, query: { limit: 50, ...page } as QueryOf<'listMembers'> },
        }),
      ),
  });

export const updateMember = (org: string, user_slug: string, role: string) =>
  unwrap(
    client.PATCH('/organizations/{organization}/members/{user_slug}', {
      params: { path: { organization: org, user_slug } },
      body: { role },
    }),
  );

export const removeMember = (org: string, user_slug: string) =>
  unwrap(
    client.DELETE('/organizations/{organization}/members/{user_slug}', {
      params: { path: { organization: org, user_slug } },
    }),
  );
