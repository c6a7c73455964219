import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { AlertsNav } from '../components/alerts-nav';
import { SelectFilter } from '../components/list-filter';
import {
  Badge,
  Button,
  Card,
  CursorPager,
  Empty,
  ErrorNote,
  PageHeader,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';

import { formatTime } from '../lib/format';
import { useEnvironments, useProjects } from '../lib/hooks';
import {
  actOnNotification,
  notificationAttemptsQuery,
  notificationKeys,
  notificationQuery,
  notificationsQuery,
} from '../lib/queries/notifications';

/**
 * The list refreshes itself every LIVE_MS while the tab is visible (TanStack Query pauses the
 * interval in a hidden tab and refetches on focus). No SSE here: the app host's streams poll the
 * store per connection too, so a stream would cost the same queries for no fresher data.
 */
const LIVE_MS = 10_000;

// The notification vocabulary (docs/alerting.md#notifications); the server validates, these only
// fill the filter pickers.
const STATES = ['open', 'acknowledged', 'resolved'];
const SEVERITIES = ['info', 'warning', 'error', 'critical'];
const TYPES = [
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
];

export type { Notification } from '../lib/queries/notifications';

const severityTone = (s: string) =>
  s === 'critical' || s === 'error' ? 'red' : s === 'warning' ? 'amber' : ('slate' as const);
const stateTone = (s: string) => (s === 'open' ? 'red' : s === 'acknowledged' ? 'amber' : ('green' as const));

/** Notifications of the organization, newest occurrence first, filtered and paged by the server. */
export function NotificationsList() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const search = useSearch({ from: '/authed/o/$org/notifications' }) as Record<string, string | undefined>;
  const navigate = useNavigate();
  const projects = useProjects(org);
  const environments = useEnvironments(org);
  const list = useQuery({
    ...notificationsQuery(org, search),
    refetchInterval: LIVE_MS,
    refetchIntervalInBackground: false,
    refetchOnWindowFocus: true,
  });
  const set = (patch: Record<string, string | undefined>) =>
    navigate({
      to: '/o/$org/notifications',
      params: { org },
      search: { ...search, cursor: undefined, direction: undefined, ...patch },
    });
  const filter = (id: string, label: string, values: string[]) => (
    <SelectFilter
      id={`nf-${id}`}
      label={label}
      value={search[id]}
      values={values}
      onChange={(v) => set({ [id]: v })}
    />
  );
  return (
    <div>
      <AlertsNav org={org} />
      <PageHeader
        title="Alerts"
        subtitle="Notifications raised by failures, drift and delivery problems."
        actions={
          <p className="text-xs text-slate-600 dark:text-slate-400" data-testid="live-status">
            Live: refreshes every {LIVE_MS / 1000} s while this tab is visible · updated{' '}
            {list.dataUpdatedAt ? formatTime(new Date(list.dataUpdatedAt).toISOString()) : '—'}
          </p>
        }
      />
      <div className="mb-3 flex flex-wrap items-end gap-3">
        {filter('lifecycle_state', 'State', STATES)}
        {filter('severity', 'Severity', SEVERITIES)}
        {filter('notification_type', 'Type', TYPES)}
        {filter(
          'project_slug',
          'Project',
          (projects.data?.projects ?? []).map((p) => p.slug),
        )}
        {filter(
          'environment_slug',
          'Environment',
          (environments.data?.environments ?? []).map((e) => e.slug),
        )}
      </div>
      <ErrorNote error={list.error} />
      <Card>
        {list.data?.notifications.length === 0 ? (
          <Empty>No notifications match these filters.</Empty>
        ) : (
          <table className={tableClass}>
            <caption className="sr-only">Notifications, latest occurrence first</caption>
            <thead>
              <tr>
                {['Notification', 'State', 'Severity', 'Type', 'Where', 'Occurrences', 'Last seen'].map(
                  (h) => (
                    <th key={h} scope="col" className={thClass}>
                      {h}
                    </th>
                  ),
                )}
              </tr>
            </thead>
            <tbody>
              {list.data?.notifications.map((n) => (
                <tr key={n.slug} data-notification={n.slug}>
                  <td className={tdClass}>
                    <Link
                      to="/o/$org/notifications/$slug"
                      params={{ org, slug: n.slug }}
                      className="text-blue-700 hover:underline dark:text-blue-300"
                    >
                      {n.title}
                    </Link>
                  </td>
                  <td className={tdClass}>
                    <Badge tone={stateTone(n.lifecycle_state)}>{n.lifecycle_state}</Badge>
                  </td>
                  <td className={tdClass}>
                    <Badge tone={severityTone(n.severity)}>{n.severity}</Badge>
                  </td>
                  <td className={`${tdClass} font-mono text-xs`}>{n.notification_type}</td>
                  <td className={`${tdClass} text-xs`}>
                    {n.project_slug ? `${n.project_slug} / ${n.environment_slug ?? '—'}` : 'organization'}
                  </td>
                  <td className={tdClass}>{n.occurrence_count}</td>
                  <td className={`${tdClass} whitespace-nowrap text-xs`}>{formatTime(n.last_seen_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <CursorPager page={list.data} cursor={search.cursor} go={set} />
      </Card>
    </div>
  );
}

/** One notification: its facts, its delivery attempts, and the lifecycle actions. */
export function NotificationDetail() {
  const { org, slug } = useParams({ from: '/authed/o/$org/notifications/$slug' });
  const qc = useQueryClient();
  const one = useQuery(notificationQuery(org, slug));
  const attempts = useQuery({
    ...notificationAttemptsQuery(org, slug),
    // While a try is queued (sending, or waiting for its retry) its outcome is due soon.
    refetchInterval: (q) =>
      q.state.data?.alert_delivery_attempts.some((a) => a.status === 'queued') ? 5_000 : false,
  });
  const act = useMutation({
    mutationFn: (action: 'acknowledge' | 'resolve') => actOnNotification(org, slug, action),
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: notificationKeys.all(org) });
    },
  });
  const n = one.data;
  const facts: [string, ReactNode][] = n
    ? [
        [
          'Type',
          <span key="t" className="font-mono text-xs">
            {n.notification_type}
          </span>,
        ],
        [
          'Severity',
          <Badge key="s" tone={severityTone(n.severity)}>
            {n.severity}
          </Badge>,
        ],
        ['Where', n.project_slug ? `${n.project_slug} / ${n.environment_slug ?? '—'}` : 'organization'],
        ['Source', `${n.source_kind} ${n.source_action}`],
        ['Involves', n.source_refs.map((r) => `${r.kind}: ${r.value}`).join(', ') || '—'],
        ['Occurrences', `${n.occurrence_count} (reopened ${n.reopen_count}×)`],
        ['First seen', formatTime(n.first_seen_at)],
        ['Last seen', formatTime(n.last_seen_at)],
        ['Acknowledged', n.acknowledged_at ? formatTime(n.acknowledged_at) : '—'],
        ['Resolved', n.resolved_at ? formatTime(n.resolved_at) : '—'],
      ]
    : [];
  return (
    <div>
      <AlertsNav org={org} />
      <p className="mb-2 text-sm">
        <Link
          to="/o/$org/notifications"
          params={{ org }}
          className="text-blue-700 hover:underline dark:text-blue-300"
        >
          ← All alerts
        </Link>
      </p>
      <ErrorNote error={one.error} />
      {n && (
        <>
          <PageHeader
            title={n.title}
            subtitle={n.summary}
            actions={
              <div className="flex items-center gap-2">
                <span data-testid="notification-state">
                  <Badge tone={stateTone(n.lifecycle_state)}>{n.lifecycle_state}</Badge>
                </span>
                <Button
                  onClick={() => act.mutate('acknowledge')}
                  disabled={act.isPending || n.lifecycle_state !== 'open'}
                >
                  Acknowledge
                </Button>
                <Button
                  onClick={() => act.mutate('resolve')}
                  disabled={act.isPending || n.lifecycle_state === 'resolved'}
                >
                  Resolve
                </Button>
              </div>
            }
          />
          <ErrorNote error={act.error} />
          <Card title="Facts">
            <dl className="grid grid-cols-[max-content_1fr] gap-x-6 gap-y-1 p-3 text-sm">
              {facts.map(([k, v]) => (
                <div key={k} className="contents">
                  <dt className="font-medium text-slate-600 dark:text-slate-400">{k}</dt>
                  <dd>{v}</dd>
                </div>
              ))}
            </dl>
          </Card>
        </>
      )}
      <div className="mt-4">
        <Card
          title="Delivery attempts"
          actions={
            <Link
              to="/o/$org/alerts/attempts"
              params={{ org }}
              search={{ notification_slugs: slug, per: '10' }}
              className="text-sm text-blue-700 hover:underline dark:text-blue-300"
            >
              Open in the delivery attempts view
            </Link>
          }
        >
          <ErrorNote error={attempts.error} />
          {attempts.data?.alert_delivery_attempts.length === 0 ? (
            <Empty>No alert was sent for this notification.</Empty>
          ) : (
            <table className={tableClass}>
              <caption className="sr-only">Delivery attempts, newest first</caption>
              <thead>
                <tr>
                  {['Destination', 'Status', 'Try', 'Queued', 'Sent / failed', 'Error'].map((h) => (
                    <th key={h} scope="col" className={thClass}>
                      {h}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {attempts.data?.alert_delivery_attempts.map((a) => (
                  <tr key={a.slug}>
                    <td className={tdClass}>
                      {a.destination_name ?? 'deleted'}{' '}
                      <span className="text-xs">({a.destination_type})</span>
                    </td>
                    <td className={tdClass}>
                      <Badge tone={a.status === 'failed' ? 'red' : a.status === 'sent' ? 'green' : 'slate'}>
                        {a.status}
                      </Badge>
                    </td>
                    <td className={tdClass}>{a.provider_attempt}</td>
                    <td className={`${tdClass} whitespace-nowrap text-xs`}>{formatTime(a.queued_at)}</td>
                    <td className={`${tdClass} whitespace-nowrap text-xs`}>
                      {a.sent_at ? formatTime(a.sent_at) : a.failed_at ? formatTime(a.failed_at) : '—'}
                    </td>
                    <td className={`${tdClass} text-xs`}>{a.error_message ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Card>
      </div>
    </div>
  );
}
