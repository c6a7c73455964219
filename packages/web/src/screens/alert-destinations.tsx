import { useQuery } from '@tanstack/react-query';
import { useParams, useSearch } from '@tanstack/react-router';
import {
  AlertListPage,
  DeleteButton,
  NameCell,
  StatusCells,
  useRemove,
  useToList,
} from '../components/alert-list';
import { AlertsNav } from '../components/alerts-nav';
import { DestinationForm } from '../components/destination-form';
import { DestinationTestResult, SendTestButton, useDestinationTest } from '../components/destination-test';
import { Button, ErrorNote, PageHeader, tdClass } from '../components/ui';
import { alertKeys, deleteDestination, destinationQuery, destinationsQuery } from '../lib/queries/alerts';

/** Alert destinations: where policies send notifications, with a test message per destination. */
export function DestinationsList() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const search = useSearch({ from: '/authed/o/$org/alerts/destinations' });
  const list = useQuery(destinationsQuery(org, search));
  const test = useDestinationTest(org);
  const remove = useRemove((slug) => deleteDestination(org, slug), alertKeys.destinations(org));
  return (
    <AlertListPage
      org={org}
      list="/o/$org/alerts/destinations"
      title="Alert destinations"
      subtitle="Where alert policies send notifications. Recipients are not secret; mail goes through the server's SMTP relay."
      newLabel="New destination"
      notes={<DestinationTestResult test={test} />}
      error={list.error ?? remove.error}
      emptyBefore="No destination yet."
      emptyAfter=" to receive alerts by email."
      caption="Alert destinations, newest first"
      headers={['Name', 'Type', 'Recipients', 'Status', 'Updated', 'Actions']}
      page={list.data}
      rows={list.data?.alert_destinations ?? []}
      cursor={search.cursor}
      row={(d) => (
        <tr key={d.slug} data-destination={d.slug}>
          <NameCell org={org} to="/o/$org/alerts/destinations/$slug" slug={d.slug} name={d.name} />
          <td className={tdClass}>{d.type}</td>
          <td className={`${tdClass} text-xs`}>{d.non_secret_config.recipients.join(', ')}</td>
          <StatusCells enabled={d.enabled} updatedAt={d.updated_at} />
          <td className={`${tdClass} whitespace-nowrap`}>
            <div className="flex gap-1">
              <SendTestButton name={d.name} slug={d.slug} test={test} />
              <DeleteButton noun="destination" name={d.name} onConfirm={() => remove.mutate(d.slug)}>
                Policies that still send to it keep it from being deleted (409); remove it from them first.
              </DeleteButton>
            </div>
          </td>
        </tr>
      )}
    />
  );
}

export function DestinationNew() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const back = useToList(org, '/o/$org/alerts/destinations');
  return (
    <div className="max-w-3xl">
      <AlertsNav org={org} />
      <PageHeader title="New alert destination" />
      <DestinationForm org={org} onSaved={back} />
    </div>
  );
}

export function DestinationDetail() {
  const { org, slug } = useParams({ from: '/authed/o/$org/alerts/destinations/$slug' });
  const back = useToList(org, '/o/$org/alerts/destinations');
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
          <DestinationForm org={org} existing={one.data} onSaved={back} />
        </>
      )}
      <p className="mt-3">
        <Button onClick={back}>Back to destinations</Button>
      </p>
    </div>
  );
}
