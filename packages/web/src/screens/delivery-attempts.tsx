import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { AlertsNav } from '../components/alerts-nav';
import { SelectFilter } from '../components/list-filter';
import {
  Badge,
  Card,
  CursorPager,
  Empty,
  ErrorNote,
  PageHeader,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';
import { attemptTone, LIFECYCLE_STATES, NOTIFICATION_TYPES, SEVERITIES } from '../lib/alerts';

import { formatTime } from '../lib/format';
import { useProjects } from '../lib/hooks';
import { deliveryAttemptsQuery, notificationsQuery } from '../lib/queries/notifications';

const STATUSES = ['queued', 'sent', 'failed'];
const PER = ['1', '5', '10'];
const linkClass = 'text-blue-700 hover:underline dark:text-blue-300';

/**
 * Delivery attempts across the organization. The API reads attempts in bulk for up to 50
 * notifications (GET alert-delivery-attempts?notification_slugs=), so this screen pages through
 * notifications with their filters and cursors (50 a page) and shows the recent attempts of each
 * page's notifications; `?notification_slugs=a,b` shows exactly those.
 */
export function DeliveryAttempts() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const search = useSearch({ from: '/authed/o/$org/alerts/attempts' });
  const navigate = useNavigate();
  const projects = useProjects(org);
  const { notification_slugs, per, status, ...notificationFilters } = search;
  const notifications = useQuery({
    ...notificationsQuery(org, notificationFilters),
    enabled: !notification_slugs,
  });
  const slugs = notification_slugs
    ? notification_slugs.split(',').filter(Boolean)
    : (notifications.data?.notifications.map((n) => n.slug) ?? []);
  const attempts = useQuery(deliveryAttemptsQuery(org, slugs, per));
  const titles = new Map(notifications.data?.notifications.map((n) => [n.slug, n.title]));
  const rows = (attempts.data?.alert_delivery_attempts ?? [])
    .filter((a) => !status || a.status === status)
    .sort((a, b) => b.queued_at.localeCompare(a.queued_at));
  const set = (patch: Record<string, string | undefined>) =>
    navigate({
      to: '/o/$org/alerts/attempts',
      params: { org },
      search: { ...search, cursor: undefined, direction: undefined, ...patch },
    });
  const filter = (
    id: keyof typeof search,
    label: string,
    values: readonly { value: string; label: string }[],
    any = 'Any',
  ) => (
    <SelectFilter
      id={`af-${id}`}
      label={label}
      value={search[id]}
      values={values}
      any={any}
      onChange={(v) => set({ [id]: v })}
    />
  );
  const plain = (l: readonly string[]) => l.map((v) => ({ value: v, label: v }));
  const loading = notifications.isLoading || attempts.isLoading;
  return (
    <div>
      <AlertsNav org={org} />
      <PageHeader
        title="Delivery attempts"
        subtitle="Every try to mail a notification to a destination: sent, queued for a retry, or failed with the SMTP server's answer."
      />
      {notification_slugs ? (
        <p className="mb-3 text-sm" data-testid="attempts-scope">
          Attempts of {slugs.length === 1 ? 'notification' : 'notifications'}{' '}
          {slugs.map((s, i) => (
            <span key={s}>
              {i > 0 && ', '}
              <Link to="/o/$org/notifications/$slug" params={{ org, slug: s }} className={linkClass}>
                {s}
              </Link>
            </span>
          ))}
          .{' '}
          <Link to="/o/$org/alerts/attempts" params={{ org }} search={{}} className={linkClass}>
            Show all notifications
          </Link>
        </p>
      ) : (
        <div className="mb-3 flex flex-wrap items-end gap-3">
          {filter('lifecycle_state', 'Notification state', plain(LIFECYCLE_STATES))}
          {filter('severity', 'Severity', plain(SEVERITIES))}
          {filter('notification_type', 'Notification type', plain(NOTIFICATION_TYPES))}
          {filter(
            'project_slug',
            'Project',
            (projects.data?.projects ?? []).map((p) => ({ value: p.slug, label: p.name })),
          )}
          {filter('status', 'Attempt status', plain(STATUSES))}
          {filter(
            'per',
            'Tries per notification',
            PER.map((v) => ({ value: v, label: v })),
            'Latest 5',
          )}
        </div>
      )}
      <div className="mb-3">
        <ErrorNote error={notifications.error ?? attempts.error} />
      </div>
      <Card>
        {!loading && rows.length === 0 ? (
          <Empty>
            {slugs.length === 0
              ? 'No notification matches these filters, so nothing was sent.'
              : 'No delivery attempt for these notifications: no enabled policy matched them, or nothing matches the status.'}
          </Empty>
        ) : (
          <table className={tableClass}>
            <caption className="sr-only">Delivery attempts, newest first</caption>
            <thead>
              <tr>
                {[
                  'Notification',
                  'Destination',
                  'Status',
                  'Try',
                  'Queued',
                  'Sent / failed',
                  'SMTP',
                  'Error',
                ].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((a) => {
                const m = a.provider_response_metadata;
                return (
                  <tr key={a.slug} data-attempt={a.slug} data-status={a.status}>
                    <td className={`${tdClass} text-xs`}>
                      <Link
                        to="/o/$org/notifications/$slug"
                        params={{ org, slug: a.notification_record_slug }}
                        className={linkClass}
                      >
                        {titles.get(a.notification_record_slug) ?? a.notification_record_slug}
                      </Link>
                      {a.alert_policy_slug && (
                        <div className="text-slate-600 dark:text-slate-400">policy {a.alert_policy_slug}</div>
                      )}
                    </td>
                    <td className={`${tdClass} text-xs`}>
                      {a.destination_slug ? (
                        <Link
                          to="/o/$org/alerts/destinations/$slug"
                          params={{ org, slug: a.destination_slug }}
                          className={linkClass}
                        >
                          {a.destination_name ?? a.destination_slug}
                        </Link>
                      ) : (
                        `${a.destination_name ?? '—'} (deleted)`
                      )}
                    </td>
                    <td className={tdClass}>
                      <Badge tone={attemptTone(a.status)}>{a.status}</Badge>
                      {m.failure_class && <div className="text-xs">{m.failure_class}</div>}
                    </td>
                    <td className={tdClass}>{a.provider_attempt}</td>
                    <td className={`${tdClass} whitespace-nowrap text-xs`}>{formatTime(a.queued_at)}</td>
                    <td className={`${tdClass} whitespace-nowrap text-xs`}>
                      {formatTime(a.sent_at ?? a.failed_at)}
                      {m.next_retry_at && <div>next try {formatTime(m.next_retry_at)}</div>}
                    </td>
                    <td className={`${tdClass} font-mono text-xs`}>
                      {[m.smtp_response_code, m.enhanced_status, m.smtp_command].filter(Boolean).join(' ') ||
                        '—'}
                      {m.rejected_recipients?.length ? (
                        <div>refused: {m.rejected_recipients.join(', ')}</div>
                      ) : null}
                    </td>
                    <td className={`${tdClass} text-xs`}>{a.error_message ?? ''}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
        {!notification_slugs && <CursorPager page={notifications.data} cursor={search.cursor} go={set} />}
      </Card>
    </div>
  );
}
