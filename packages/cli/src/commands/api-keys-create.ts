import { unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { orgOption } from '../flags';
import { printJson, printLines } from '../io';
import { printKey } from './api-keys-format';

type CreateOptions = ApiOptions & {
  org: string;
  name: string;
  role: string;
  canManageApiKeys?: boolean;
  expiresAt?: string;
  description?: string;
  slug?: string;
};

export function apiKeysCreateCommand(apiKeys: Command) {
  withApiOptions(
    apiKeys
      .command('create')
      .description('Create an organization API key; its token is printed once')
      .addOption(orgOption())
      .requiredOption('--name <name>', 'display name')
      .requiredOption(
        '--role <role>',
        'role the key acts with (owner, admin, developer, operator, viewer or custom)',
      )
      .option('--can-manage-api-keys', 'let the key manage API keys (its role must grant api_keys.manage)')
      .option('--expires-at <iso>', 'expiry as an ISO 8601 date-time in the future')
      .option('--description <text>', 'free text')
      .option('--slug <slug>', 'choose the slug (default: derived from the name)'),
  ).action(async (opts: CreateOptions) => {
    const client = await apiClient(opts);
    const key = await unwrap(
      client.POST('/organizations/{organization}/api-keys', {
        params: { path: { organization: opts.org } },
        body: {
          name: opts.name,
          role: opts.role,
          can_manage_api_keys: opts.canManageApiKeys === true,
          ...(opts.expiresAt !== undefined ? { expires_at: opts.expiresAt } : {}),
          ...(opts.description !== undefined ? { description: opts.description } : {}),
          ...(opts.slug !== undefined ? { slug: opts.slug } : {}),
        },
      }),
    );
    if (opts.json) return printJson(key);
    printKey(key);
    printLines([`token:               ${key.token}`, '', 'Store the token now: it is not shown again.']);
  });
}
