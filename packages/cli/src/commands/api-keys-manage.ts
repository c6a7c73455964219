import type { Command } from 'commander';
import { action } from '../resource';

const ITEM = '/organizations/{organization}/api-keys/{api_key_slug}';

/** The remaining API key verbs, on the shared resource kit (create, list, revoke have their own files). */
export function apiKeysManageCommands(apiKeys: Command) {
  action(apiKeys, 'org', {
    name: 'get',
    args: ['<api_key>'],
    description: 'Show an API key',
    method: 'GET',
    path: ITEM,
  });
  action(apiKeys, 'org', {
    name: 'update',
    args: ['<api_key>'],
    description: 'Rename or describe an API key',
    method: 'PATCH',
    path: ITEM,
    body: ['name', 'description'],
  });
  action(apiKeys, 'org', {
    name: 'rotate',
    args: ['<api_key>'],
    description: 'Replace the token of an API key; the new token is printed once',
    method: 'POST',
    path: '/organizations/{organization}/api-keys/{api_key_slug}:rotate',
  });
  action(apiKeys, 'org', {
    name: 'delete',
    args: ['<api_key>'],
    description: 'Delete an API key',
    method: 'DELETE',
    path: ITEM,
  });
}
