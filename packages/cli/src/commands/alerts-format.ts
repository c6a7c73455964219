import type { paths } from '@sluice/client';
import { InvalidArgumentError } from 'commander';
import { printLines, printTable } from '../io';

type Json<P extends keyof paths, M extends 'get' | 'post'> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': infer R } } };
}
  ? R
  : never;

export type Notification = Json<'/organizations/{organization}/notifications/{notification_slug}', 'get'>;
export type Destination = Json<
  '/organizations/{organization}/alert-destinations/{alert_destination_slug}',
  'get'
>;
export type Policy = Json<'/organizations/{organization}/alert-policies/{alert_policy_slug}', 'get'>;
export type Attempt = Json<
  '/organizations/{organization}/alert-delivery-attempts',
  'get'
>['alert_delivery_attempts'][number];

export function pageSize(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new InvalidArgumentError('an integer from 1 to 100');
  return n;
}

export function printNotification(n: Notification) {
  printLines([
    `slug:         ${n.slug}`,
    `title:        ${n.title}`,
    `type:         ${n.notification_type}`,
    `severity:     ${n.severity}`,
    `state:        ${n.lifecycle_state}`,
    `where:        ${n.project_slug ?? '-'}${n.environment_slug ? `/${n.environment_slug}` : ''}`,
    `summary:      ${n.summary}`,
    `occurrences:  ${n.occurrence_count} (reopened ${n.reopen_count})`,
    `first seen:   ${n.first_seen_at}`,
    `last seen:    ${n.last_seen_at}`,
    `acknowledged: ${n.acknowledged_at ?? '-'}`,
    `resolved:     ${n.resolved_at ?? '-'}`,
  ]);
}

export function printNotificationTable(rows: Notification[]) {
  printTable(rows, [
    { header: 'SLUG', value: (n) => n.slug },
    { header: 'SEVERITY', value: (n) => n.severity },
    { header: 'STATE', value: (n) => n.lifecycle_state },
    { header: 'TYPE', value: (n) => n.notification_type },
    { header: 'COUNT', value: (n) => String(n.occurrence_count) },
    { header: 'LAST_SEEN', value: (n) => n.last_seen_at },
    { header: 'TITLE', value: (n) => n.title },
  ]);
}

export function printDestinationTable(rows: Destination[]) {
  printTable(rows, [
    { header: 'SLUG', value: (d) => d.slug },
    { header: 'NAME', value: (d) => d.name },
    { header: 'TYPE', value: (d) => d.type },
    { header: 'ENABLED', value: (d) => (d.enabled ? 'yes' : 'no') },
    { header: 'RECIPIENTS', value: (d) => d.non_secret_config.recipients.join(',') },
  ]);
}

export function printPolicyTable(rows: Policy[]) {
  printTable(rows, [
    { header: 'SLUG', value: (p) => p.slug },
    { header: 'NAME', value: (p) => p.name },
    { header: 'SCOPE', value: (p) => p.scope },
    {
      header: 'WHERE',
      value: (p) =>
        p.project_slug ? `${p.project_slug}${p.environment_slug ? `/${p.environment_slug}` : ''}` : null,
    },
    { header: 'TYPE', value: (p) => p.notification_type },
    { header: 'SEVERITY', value: (p) => p.severity },
    { header: 'ENABLED', value: (p) => (p.enabled ? 'yes' : 'no') },
    { header: 'DESTINATIONS', value: (p) => p.destination_slugs.join(',') },
  ]);
}

export function printAttemptTable(rows: Attempt[]) {
  printTable(rows, [
    { header: 'NOTIFICATION', value: (a) => a.notification_record_slug },
    { header: 'ATTEMPT', value: (a) => a.slug },
    { header: 'TRY', value: (a) => String(a.provider_attempt) },
    { header: 'STATUS', value: (a) => a.status },
    { header: 'DESTINATION', value: (a) => a.destination_slug },
    { header: 'SMTP', value: (a) => (a.provider_response_metadata.smtp_response_code ?? null)?.toString() },
    { header: 'ERROR', value: (a) => a.error_message },
    { header: 'QUEUED', value: (a) => a.queued_at },
  ]);
}
