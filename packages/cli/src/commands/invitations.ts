import type { Command } from 'commander';
import { action, cols, listAction } from '../resource';

const LIST = '/organizations/{organization}/invitations';
const ITEM = '/organizations/{organization}/invitations/{invitation_slug}';

export function invitationsCommand(program: Command) {
  const noun = program.command('invitations').description('Invite people to an organization');
  listAction(noun, 'org', {
    description: 'List invitations',
    path: LIST,
    key: 'invitations',
    columns: cols('slug', 'email', 'role', 'status', 'expires_at', 'created_at'),
    filters: [
      { flag: 'status', query: 'status', description: 'pending, accepted, declined, revoked or expired' },
    ],
  });
  action(noun, 'org', {
    name: 'get',
    args: ['<invitation>'],
    description: 'Show an invitation',
    method: 'GET',
    path: ITEM,
  });
  action(noun, 'org', {
    name: 'create',
    description: 'Invite an email address (--email, --role)',
    method: 'POST',
    path: LIST,
    body: ['email', 'role'],
  });
  action(noun, 'org', {
    name: 'revoke',
    args: ['<invitation>'],
    description: 'Withdraw an invitation',
    method: 'DELETE',
    path: ITEM,
  });
  // The invitee's side: no organization in the path, so --org is not needed for these.
  for (const verb of ['accept', 'decline'] as const) {
    const cmd = action(noun, 'org', {
      name: verb,
      args: ['<invitation>'],
      description: `${verb === 'accept' ? 'Accept' : 'Decline'} an invitation sent to you (personal access token)`,
      method: 'POST',
      path:
        verb === 'accept'
          ? '/invitations/{invitation_slug}:accept'
          : '/invitations/{invitation_slug}:decline',
    });
    // --org is irrelevant here; make it optional.
    const org = cmd.options.find((o) => o.long === '--org');
    if (org) org.mandatory = false;
  }
}
