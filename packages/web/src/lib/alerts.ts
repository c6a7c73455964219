import { useQuery } from '@tanstack/react-query';
import type { paths } from '../../../client/src/schema';
import { api, type Page } from './api';

// The alerting vocabulary (docs/alerting.md). The lists are written out for the pickers, and the
// compiler holds them to the API: `satisfies` fails when the generated client (the OpenAPI
// document) disagrees.
type PolicyBody = NonNullable<
  paths['/organizations/{organization}/alert-policies']['post']['requestBody']
>['content']['application/json'];
type Exactly<T extends string> = readonly [T, ...T[]];
const exhaustive =
  <T extends string>() =>
  <L extends Exactly<T>>(list: L & ([T] extends [L[number]] ? unknown : 'missing a value')) =>
    list;

export const NOTIFICATION_TYPES = exhaustive<NonNullable<PolicyBody['notification_type']>>()([
  'pipeline_run_failed',
  'pipeline_run_recovered',
  'pipeline_trigger_failed',
  'data_source_test_failed',
  'credential_failed',
  'schema_import_failed',
  'schema_drift_detected',
  'alert_delivery_failed',
] as const);
export const SEVERITIES = exhaustive<NonNullable<PolicyBody['severity']>>()([
  'info',
  'warning',
  'error',
  'critical',
] as const);
export const LIFECYCLE_STATES = exhaustive<NonNullable<PolicyBody['lifecycle_state']>>()([
  'open',
  'acknowledged',
  'resolved',
] as const);
export const POLICY_SCOPES = exhaustive<PolicyBody['scope']>()([
  'organization',
  'project',
  'project_environment',
] as const);

export type Destination = {
  slug: string;
  name: string;
  type: 'unknown' | 'email';
  non_secret_config: { recipients: string[] };
  enabled: boolean;
  created_at: string;
  updated_at: string;
};

export type DestinationTest = {
  status: string;
  destination_slug: string;
  destination_type: string;
  recipient_count: number;
  diagnostics_persisted: boolean;
  enqueued_jobs: { kind: string; queue: string; state: string }[];
};

export type Policy = {
  slug: string;
  name: string;
  scope: 'unknown' | 'organization' | 'project' | 'project_environment';
  project_slug: string | null;
  environment_slug: string | null;
  notification_type: string | null;
  severity: string | null;
  lifecycle_state: string | null;
  source_kind: string | null;
  source_action: string | null;
  source_ref: string | null;
  destination_slugs: string[];
  enabled: boolean;
  created_at: string;
  updated_at: string;
};

export type SourceMetadata = {
  sources: { source_kind: string; source_actions: string[] }[];
  source_refs: { value: string; label: string }[];
};

export type Attempt = {
  slug: string;
  notification_record_slug: string;
  alert_policy_slug: string | null;
  destination_slug: string | null;
  destination_name: string | null;
  destination_type: string;
  status: 'unknown' | 'queued' | 'sent' | 'failed';
  provider_attempt: number;
  provider_response_metadata: {
    transport?: string;
    smtp_response_code?: number;
    enhanced_status?: string;
    smtp_command?: string;
    smtp_response?: string;
    failure_class?: string;
    accepted_count?: number;
    rejected_count?: number;
    rejected_recipients?: string[];
    duration_ms?: number;
    next_retry_at?: string;
  };
  error_category: string | null;
  error_message: string | null;
  queued_at: string;
  sent_at: string | null;
  failed_at: string | null;
};

export const destinationsPath = (org: string) => `/organizations/${org}/alert-destinations`;
export const policiesPath = (org: string) => `/organizations/${org}/alert-policies`;

/** Every destination of the organization (the API caps a page at 100; pickers need them all). */
export const useAllDestinations = (org: string) =>
  useQuery({
    queryKey: ['alert-destinations', org, 'all'],
    queryFn: async () => {
      const all: Destination[] = [];
      let cursor: string | undefined;
      do {
        const page = await api.get<Page<'alert_destinations', Destination>>(destinationsPath(org), {
          limit: 100,
          cursor,
        });
        all.push(...page.alert_destinations);
        cursor = page.has_more ? (page.next_cursor ?? undefined) : undefined;
      } while (cursor);
      return all;
    },
  });

export const attemptTone = (s: string) =>
  s === 'failed' ? 'red' : s === 'sent' ? 'green' : s === 'queued' ? 'amber' : ('slate' as const);
