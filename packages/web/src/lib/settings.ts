import type { Ok } from './api';

export type Member = Ok<'listMembers'>['members'][number];
export type Invitation = Ok<'listInvitations'>['invitations'][number];
export type Role = Ok<'getRoles'>;
export type Permission = Ok<'listPermissions'>['permissions'][number];

export const INVITATION_STATUSES = ['pending', 'accepted', 'declined', 'expired', 'revoked', 'auto_accepted'];

/** The search state of a settings section: its list cursor and filters. */
export type SettingsSearch = {
  env?: string;
  status?: string;
  role?: string;
  cursor?: string;
  direction?: string;
};
