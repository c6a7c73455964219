import type { Command } from 'commander';
import { action, cols, listAction } from '../resource';

const ITEM = '/organizations/{organization}';

export function organizationsCommand(program: Command) {
  const noun = program.command('organizations').description('Show and change organizations');
  const list = listAction(noun, 'org', {
    description: 'List the organizations your token can see',
    path: '/organizations',
    key: 'organizations',
    columns: [
      ...cols('slug', 'name'),
      { header: 'PLAN', value: (r) => (r.plan as { name?: string } | null)?.name },
      ...cols('created_at'),
    ],
  });
  const org = list.options.find((o) => o.long === '--org');
  if (org) org.mandatory = false;
  action(noun, 'org', {
    name: 'get',
    description: 'Show the organization (--org)',
    method: 'GET',
    path: ITEM,
  });
  action(noun, 'org', {
    name: 'update',
    description: 'Rename the organization or change its event retention (--set event_log_retention_days=90)',
    method: 'PATCH',
    path: ITEM,
    body: ['name'],
  });
}
