import type { paths } from '@sluice/client';
import { printLines, printTable } from '../io';

type ListResponse =
  paths['/organizations/{organization}/api-keys']['get']['responses'][200]['content']['application/json'];
export type ApiKey = ListResponse['api_keys'][number];

/** The readable form of one key (create, revoke). */
export function printKey(key: ApiKey) {
  printLines([
    `slug:                ${key.slug}`,
    `name:                ${key.name}`,
    `role:                ${key.role}`,
    `token prefix:        ${key.token_prefix}`,
    `can manage API keys: ${key.can_manage_api_keys}`,
    `expires at:          ${key.expires_at ?? '-'}`,
    `revoked at:          ${key.revoked_at ?? '-'}`,
    `created at:          ${key.created_at}`,
  ]);
}

export function printKeyTable(keys: ApiKey[]) {
  printTable(keys, [
    { header: 'SLUG', value: (k) => k.slug },
    { header: 'NAME', value: (k) => k.name },
    { header: 'ROLE', value: (k) => k.role },
    { header: 'PREFIX', value: (k) => k.token_prefix },
    { header: 'MANAGES_KEYS', value: (k) => (k.can_manage_api_keys ? 'yes' : 'no') },
    { header: 'EXPIRES', value: (k) => k.expires_at },
    { header: 'REVOKED', value: (k) => k.revoked_at },
    { header: 'LAST_USED', value: (k) => k.last_used_at },
    { header: 'CREATED', value: (k) => k.created_at },
  ]);
}
