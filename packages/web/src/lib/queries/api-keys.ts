import { queryOptions } from '@tanstack/react-query';
import { client, unwrap } from '../api';

export const apiKeyKeys = { all: (org: string) => ['api-keys', org] as const };

export const apiKeysQuery = (org: string) =>
  queryOptions({
    queryKey: apiKeyKeys.all(org),
    queryFn: async () =>
      (
        await unwrap(
          client.GET('/organizations/{organization}/api-keys', {
            params: { path: { organization: org }, query: { limit: 100 } },
          }),
        )
      ).api_keys,
  });

export const createApiKey = (org: string, name: string, role: string) =>
  unwrap(
    client.POST('/organizations/{organization}/api-keys', {
      params: { path: { organization: org } },
      body: { name, role },
    }),
  );

export const revokeApiKey = (org: string, api_key_slug: string) =>
  unwrap(
    client.POST('/organizations/{organization}/api-keys/{api_key_slug}:revoke', {
      params: { path: { organization: org, api_key_slug } },
    }),
  );
