import { useQuery } from '@tanstack/react-query';
import { api, type Page } from './api';

export type Member = {
  user_slug: string;
  email: string;
  name: string;
  role: string;
  created_at: string;
  updated_at: string;
};
export type Invitation = {
  slug: string;
  email: string;
  role: string;
  status: 'pending' | 'accepted' | 'declined' | 'expired' | 'revoked' | 'auto_accepted';
  invited_by_user_slug: string | null;
  expires_at: string;
  responded_at: string | null;
  created_at: string;
};
export type Role = {
  slug: string;
  name: string;
  description: string | null;
  permissions: string[];
  built_in: boolean;
  updated_at: string;
};
export type Permission = { name: string; description: string };

export const INVITATION_STATUSES = ['pending', 'accepted', 'declined', 'expired', 'revoked', 'auto_accepted'];

/** Every role of the organization, built in first, for role pickers. */
export const useRoles = (org: string) =>
  useQuery({
    queryKey: ['roles', org],
    queryFn: async () => {
      const all: Role[] = [];
      let cursor: string | undefined;
      do {
        const page = await api.get<Page<'roles', Role>>(`/organizations/${org}/roles`, {
          limit: 100,
          cursor,
        });
        all.push(...page.roles);
        cursor = page.has_more ? (page.next_cursor ?? undefined) : undefined;
      } while (cursor);
      return all.sort((a, b) => Number(b.built_in) - Number(a.built_in));
    },
  });

/** The search state of a settings section: its list cursor and filters. */
export type SettingsSearch = {
  env?: string;
  status?: string;
  role?: string;
  cursor?: string;
  direction?: string;
};
