import type { Command } from 'commander';
import { action, cols, listAction } from '../resource';

const LIST = '/organizations/{organization}/members';
const ITEM = '/organizations/{organization}/members/{user_slug}';

export function membersCommand(program: Command) {
  const noun = program.command('members').description('Manage the members of an organization');
  listAction(noun, 'org', {
    description: 'List members',
    path: LIST,
    key: 'members',
    columns: cols('user_slug', 'email', 'name', 'role', 'created_at'),
  });
  action(noun, 'org', {
    name: 'get',
    args: ['<user>'],
    description: 'Show a member',
    method: 'GET',
    path: ITEM,
  });
  action(noun, 'org', {
    name: 'update',
    args: ['<user>'],
    description: "Change a member's role (--role SLUG)",
    method: 'PATCH',
    path: ITEM,
    body: ['role'],
  });
  action(noun, 'org', {
    name: 'remove',
    args: ['<user>'],
    description: 'Remove a member',
    method: 'DELETE',
    path: ITEM,
  });
}
