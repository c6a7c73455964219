import type { PolicyBody } from './queries/alerts';

// The alerting vocabulary (docs/alerting.md). The lists are written out for the pickers, and the
// compiler holds them to the API: `satisfies` fails when the generated client (the OpenAPI
// document) disagrees.
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
  'cdc_capture_lagging',
  'cdc_capture_inactive',
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

export type { Destination, DestinationTest, Policy, SourceMetadata } from './queries/alerts';
export type { Attempt } from './queries/notifications';

export const attemptTone = (s: string) =>
  s === 'failed' ? 'red' : s === 'sent' ? 'green' : s === 'queued' ? 'amber' : ('slate' as const);
