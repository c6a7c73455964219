import { queryOptions } from '@tanstack/react-query';
import { type BodyOf, client, type Ok, type QueryOf, unwrap } from '../api';
import { allPages } from './places';

export type Destination = Ok<'getAlertDestinations'>;
export type DestinationTest = Ok<'testAlertDestinations'>;
export type Policy = Ok<'getAlertPolicies'>;
export type PolicyBody = BodyOf<'createAlertPolicies'>;
export type SourceMetadata = Ok<'getAlertPoliciesSourceMetadata'>;
type ListFilter = Record<string, string | undefined>;

export const alertKeys = {
  destinations: (org: string) => ['alert-destinations', org] as const,
  destinationList: (org: string, f: ListFilter) => [...alertKeys.destinations(org), 'list', f] as const,
  allDestinations: (org: string) => [...alertKeys.destinations(org), 'all'] as const,
  destination: (org: string, slug: string) => [...alertKeys.destinations(org), 'one', slug] as const,
  policies: (org: string) => ['alert-policies', org] as const,
  policyList: (org: string, f: ListFilter) => [...alertKeys.policies(org), 'list', f] as const,
  policy: (org: string, slug: string) => [...alertKeys.policies(org), 'one', slug] as const,
  sourceMetadata: (org: string) => [...alertKeys.policies(org), 'source-metadata'] as const,
};

const orgPath = (org: string) => ({ path: { organization: org } });

export const destinationsQuery = (org: string, f: ListFilter) =>
  queryOptions({
    queryKey: alertKeys.destinationList(org, f),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/alert-destinations', {
          params: { ...orgPath(org), query: { limit: 50, ...f } as QueryOf<'listAlertDestinations'> },
        }),
      ),
  });

/** Every destination of the organization, for pickers. */
export const allDestinationsQuery = (org: string) =>
  queryOptions({
    queryKey: alertKeys.allDestinations(org),
    queryFn: () =>
      allPages(
        (cursor) =>
          unwrap(
            client.GET('/organizations/{organization}/alert-destinations', {
              params: { ...orgPath(org), query: { limit: 100, cursor } },
            }),
          ),
        (p) => p.alert_destinations,
      ),
  });

const destinationPath = (org: string, alert_destination_slug: string) => ({
  params: { path: { organization: org, alert_destination_slug } },
});

export const destinationQuery = (org: string, slug: string) =>
  queryOptions({
    queryKey: alertKeys.destination(org, slug),
    queryFn: () =>
      unwrap(
        client.GET(
          '/organizations/{organization}/alert-destinations/{alert_destination_slug}',
          destinationPath(org, slug),
        ),
      ),
  });

export const createDestination = (org: string, body: BodyOf<'createAlertDestinations'>) =>
  unwrap(client.POST('/organizations/{organization}/alert-destinations', { params: orgPath(org), body }));

export const updateDestination = (org: string, slug: string, body: BodyOf<'updateAlertDestinations'>) =>
  unwrap(
    client.PATCH('/organizations/{organization}/alert-destinations/{alert_destination_slug}', {
      ...destinationPath(org, slug),
      body,
    }),
  );

export const deleteDestination = (org: string, slug: string) =>
  unwrap(
    client.DELETE(
      '/organizations/{organization}/alert-destinations/{alert_destination_slug}',
      destinationPath(org, slug),
    ),
  );

export const testDestination = (org: string, slug: string) =>
  unwrap(
    client.POST(
      '/organizations/{organization}/alert-destinations/{alert_destination_slug}:test',
      destinationPath(org, slug),
    ),
  );

export const policiesQuery = (org: string, f: ListFilter) =>
  queryOptions({
    queryKey: alertKeys.policyList(org, f),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/alert-policies', {
          params: { ...orgPath(org), query: { limit: 50, ...f } as QueryOf<'listAlertPolicies'> },
        }),
      ),
  });

const policyPath = (org: string, alert_policy_slug: string) => ({
  params: { path: { organization: org, alert_policy_slug } },
});

export const policyQuery = (org: string, slug: string) =>
  queryOptions({
    queryKey: alertKeys.policy(org, slug),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/alert-policies/{alert_policy_slug}', policyPath(org, slug)),
      ),
  });

export const sourceMetadataQuery = (org: string) =>
  queryOptions({
    queryKey: alertKeys.sourceMetadata(org),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/alert-policies/source-metadata', { params: orgPath(org) }),
      ),
  });

export const createPolicy = (org: string, body: PolicyBody) =>
  unwrap(client.POST('/organizations/{organization}/alert-policies', { params: orgPath(org), body }));

export const updatePolicy = (org: string, slug: string, body: BodyOf<'updateAlertPolicies'>) =>
  unwrap(
    client.PATCH('/organizations/{organization}/alert-policies/{alert_policy_slug}', {
      ...policyPath(org, slug),
      body,
    }),
  );

export const deletePolicy = (org: string, slug: string) =>
  unwrap(
    client.DELETE('/organizations/{organization}/alert-policies/{alert_policy_slug}', policyPath(org, slug)),
  );
