import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { AlertsNav } from '../components/alerts-nav';
import { ConfirmButton } from '../components/confirm';
import { DestinationForm } from '../components/destination-form';
import { DestinationTestResult, SendTestButton, useDestinationTest } from '../components/destination-test';
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
import { alertKeys, deleteDestination, destinationQuery, destinationsQuery } from '../lib/queries/alerts';

const linkClass = 'text-blue-700 hover:underline dark:text-blue-300';

/** Alert destinations: where policies send notifications, with a test message per destination. */
export function DestinationsList() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const search = useSearch({ from: '/authed/o/$org/alerts/destinations' });
  const navigate = useNavigate();
  const qc = useQueryClient();
  const list = useQuery(destinationsQuery(org, search));
  const test = useDestinationTest(org);
  const remove = useMutation({
    mutationFn: (slug: string) => deleteDestination(org, slug),
    onSuccess: () => qc.invalidateQueries({ queryKey: alertKeys.destinations(org) }),
  });
  const page = (cursor: string | null, direction: 'next' | 'prev') =>
    navigate({
      to: '/o/$org/alerts/destinations',
      params: { org },
      search: { cursor: cursor ?? undefined, direction },
    });
  const rows = list.data?.alert_destinations ?? [];
  return (
    <div className="max-w-6xl">
      <AlertsNav org={org} />
      <PageHeader
        title="Alert destinations"
        subtitle="Where alert policies send notifications. Recipients are not secret; mail goes through the server's SMTP relay."
        actions={
          <Link to="/o/$org/alerts/destinations/new" params={{ org }} className={`${linkClass} text-sm`}>
            New destination
          </Link>
        }
      />
      <div className="mb-3 space-y-2">
        <DestinationTestResult test={test} />
        <ErrorNote error={list.error ?? remove.error} />
      </div>
      <Card>
        {list.data && rows.length === 0 ? (
          <Empty>
            No destination yet.{' '}
            <Link to="/o/$org/alerts/destinations/new" params={{ org }} className={linkClass}>
              Create one
            </Link>{' '}
            to receive alerts by email.
          </Empty>
        ) : (
          <table className={tableClass}>
            <caption className="sr-only">Alert destinations, newest first</caption>
            <thead>
              <tr>
                {['Name', 'Type', 'Recipients', 'Status', 'Updated', 'Actions'].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.slug} data-destination={d.slug}>
                  <td className={tdClass}>
                    <Link
                      to="/o/$org/alerts/destinations/$slug"
                      params={{ org, slug: d.slug }}
                      className={linkClass}
                    >
                      {d.name}
                    </Link>
                    <div className="font-mono text-xs text-slate-600 dark:text-slate-400">{d.slug}</div>
                  </td>
                  <td className={tdClass}>{d.type}</td>
                  <td className={`${tdClass} text-xs`}>{d.non_secret_config.recipients.join(', ')}</td>
                  <td className={tdClass}>
                    <Badge tone={d.enabled ? 'green' : 'slate'}>{d.enabled ? 'enabled' : 'disabled'}</Badge>
                  </td>
                  <td className={`${tdClass} whitespace-nowrap text-xs`}>{formatTime(d.updated_at)}</td>
                  <td className={`${tdClass} whitespace-nowrap`}>
                    <div className="flex gap-1">
                      <SendTestButton name={d.name} slug={d.slug} test={test} />
                      <ConfirmButton
                        label="Delete"
                        ariaLabel={`Delete ${d.name}`}
                        title={`Delete the destination ${d.name}?`}
                        confirmLabel="Delete destination"
                        onConfirm={() => remove.mutate(d.slug)}
                      >
                        Policies that still send to it keep it from being deleted (409); remove it from them
                        first.
                      </ConfirmButton>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <CursorPager
          page={list.data}
          cursor={search.cursor}
          go={(to) => page(to.cursor ?? null, to.direction)}
        />
      </Card>
    </div>
  );
}

export function DestinationNew() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const navigate = useNavigate();
  return (
    <div className="max-w-3xl">
      <AlertsNav org={org} />
      <PageHeader title="New alert destination" />
      <DestinationForm
        org={org}
        onSaved={() => navigate({ to: '/o/$org/alerts/destinations', params: { org }, search: {} })}
      />
    </div>
  );
}

export function DestinationDetail() {
  const { org, slug } = useParams({ from: '/authed/o/$org/alerts/destinations/$slug' });
  const navigate = useNavigate();
  const one = useQuery(destinationQuery(org, slug));
  const test = useDestinationTest(org);
  return (
    <div className="max-w-3xl">
      <AlertsNav org={org} />
      <ErrorNote error={one.error} />
      {one.data && (
        <>
          <PageHeader
            title={one.data.name}
            subtitle={<code>{one.data.slug}</code>}
            actions={<SendTestButton name={one.data.name} slug={one.data.slug} test={test} />}
          />
          <div className="mb-3">
            <DestinationTestResult test={test} />
          </div>
          <DestinationForm
            org={org}
            existing={one.data}
            onSaved={() => navigate({ to: '/o/$org/alerts/destinations', params: { org }, search: {} })}
          />
        </>
      )}
      <p className="mt-3">
        <Button onClick={() => navigate({ to: '/o/$org/alerts/destinations', params: { org }, search: {} })}>
          Back to destinations
        </Button>
      </p>
    </div>
  );
}
