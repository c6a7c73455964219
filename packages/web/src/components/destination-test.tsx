import { useMutation } from '@tanstack/react-query';
import { ApiError } from '../lib/api';
import { testDestination } from '../lib/queries/alerts';
import { Button, ErrorNote } from './ui';

/**
 * "Send test": one real message through the configured SMTP server, queued (202). A test keeps
 * no record (no notification, no delivery attempt), so what it shows is the queueing itself.
 */
export function useDestinationTest(org: string) {
  return useMutation({
    mutationFn: (slug: string) => testDestination(org, slug),
  });
}

export function SendTestButton(props: {
  name: string;
  slug: string;
  test: ReturnType<typeof useDestinationTest>;
  disabled?: boolean;
}) {
  const busy = props.test.isPending && props.test.variables === props.slug;
  return (
    <Button
      onClick={() => props.test.mutate(props.slug)}
      disabled={props.disabled || busy}
      aria-label={`Send test to ${props.name}`}
    >
      {busy ? 'Sending…' : 'Send test'}
    </Button>
  );
}

export function DestinationTestResult({ test }: { test: ReturnType<typeof useDestinationTest> }) {
  if (test.error instanceof ApiError && test.error.code === 'EMAIL_NOT_CONFIGURED') {
    return (
      <div
        role="alert"
        data-testid="destination-test-result"
        className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100"
      >
        <p className="font-semibold">Mail is not configured on this server (EMAIL_NOT_CONFIGURED)</p>
        <p className="mt-1">
          No test was queued for <code>{test.variables}</code>. Set <code>SLUICE_SMTP_URL</code> (for example{' '}
          <code>smtp://user:password@mail.example.com:587</code>) where <code>sluice serve</code> runs and
          restart it. Until then alerts are not mailed: their delivery attempts fail as{' '}
          <code>not_configured</code>.
        </p>
      </div>
    );
  }
  if (test.error) return <ErrorNote error={test.error} />;
  const r = test.data;
  if (!r) return null;
  const jobs = r.enqueued_jobs.map((j) => `${j.kind} on queue ${j.queue} (${j.state})`).join(', ');
  return (
    <div
      role="status"
      data-testid="destination-test-result"
      className="rounded-md border border-emerald-300 bg-emerald-50 px-3 py-2 text-sm text-emerald-950 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-100"
    >
      <p className="font-semibold">
        Test message {r.status} for <code>{r.destination_slug}</code>: {r.recipient_count} recipient
        {r.recipient_count === 1 ? '' : 's'}
      </p>
      <p className="mt-1 text-xs">
        Queued: {jobs || 'nothing'}. The worker sends it once, without retry; a test keeps no delivery
        attempt, so check the inbox (or the server log if it does not arrive).
      </p>
    </div>
  );
}
