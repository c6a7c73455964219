import { queryOptions } from '@tanstack/react-query';
import { client, type QueryOf, unwrap } from '../api';

export type InvitationFilter = { status?: string; cursor?: string; direction?: string };

export const invitationKeys = {
  all: (org: string) => ['invitations', org] as const,
  list: (org: string, f: InvitationFilter) =>
    [...invitationKeys.all(org), f.status, f.cursor, f.direction] as const,
};

export const invitationsQuery = (org: string, f: InvitationFilter) =>
  queryOptions({
    queryKey: invitationKeys.list(org, f),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/invitations', {
          params: { path: { organization: org }, query: { limit: 50, ...f } as QueryOf<'listInvitations'> },
        }),
      ),
  });

export const createInvitation = (org: string, email: string, role: string) =>
  unwrap(
    client.POST('/organizations/{organization}/invitations', {
      params: { path: { organization: org } },
      body: { email, role },
    }),
  );

export const revokeInvitation = (org: string, invitation_slug: string) =>
  unwrap(
    client.DELETE('/organizations/{organization}/invitations/{invitation_slug}', {
      params: { path: { organization: org, invitation_slug } },
    }),
  );

/** The invitee's answer (the invitation mail's page). */
export const answerInvitation = (invitation_slug: string, verb: 'accept' | 'decline') => {
  const params = { path: { invitation_slug } };
  return unwrap(
    verb === 'accept'
      ? client.POST('/invitations/{invitation_slug}:accept', { params })
      : client.POST('/invitations/{invitation_slug}:decline', { params }),
  );
};
