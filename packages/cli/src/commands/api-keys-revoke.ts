import { unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { orgOption } from '../flags';
import { printJson } from '../io';
import { printKey } from './api-keys-format';

type RevokeOptions = ApiOptions & { org: string };

export function apiKeysRevokeCommand(apiKeys: Command) {
  withApiOptions(
    apiKeys
      .command('revoke')
      .description(
        'Revoke an API key (refused at once by the API host that revoked it, by every other within SLUICE_API_KEY_CACHE_MS); it stays listed with revoked_at set',
      )
      .argument('<key_slug>', 'slug of the API key')
      .addOption(orgOption()),
  ).action(async (keySlug: string, opts: RevokeOptions) => {
    const client = await apiClient(opts);
    const key = await unwrap(
      client.POST('/organizations/{organization}/api-keys/{api_key_slug}:revoke', {
        params: { path: { organization: opts.org, api_key_slug: keySlug } },
      }),
    );
    if (opts.json) return printJson(key);
    printKey(key);
  });
}
