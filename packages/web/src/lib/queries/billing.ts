import { queryOptions } from '@tanstack/react-query';
import { ApiError, type BodyOf, client, type Ok, unwrap } from '../api';

export type BillingProfile = Ok<'getBillingProfile'>;
export type BillingProfileBody = BodyOf<'putBillingProfile'>;
/** Whose profile: the organization's, or the signed-in user's own (`org` null). */
export type BillingOwner = { org: string | null };

export const billingKeys = { profile: (o: BillingOwner) => ['billing-profile', o.org ?? 'me'] as const };

/** The profile, or null while none was saved (404). */
export const billingProfileQuery = (o: BillingOwner) =>
  queryOptions({
    queryKey: billingKeys.profile(o),
    queryFn: async (): Promise<BillingProfile | null> => {
      try {
        return o.org
          ? await unwrap(
              client.GET('/organizations/{organization}/billing-profile', {
                params: { path: { organization: o.org } },
              }),
            )
          : await unwrap(client.GET('/users/me/billing-profile'));
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) return null;
        throw e;
      }
    },
  });

export const putBillingProfile = (o: BillingOwner, body: BillingProfileBody): Promise<BillingProfile> =>
  o.org
    ? unwrap(
        client.PUT('/organizations/{organization}/billing-profile', {
          params: { path: { organization: o.org } },
          body,
        }),
      )
    : unwrap(client.PUT('/users/me/billing-profile', { body }));
