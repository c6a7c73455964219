import { useQueryClient } from '@tanstack/react-query';
import { useNavigate, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { Button, ErrorNote } from '../components/ui';
import { answerInvitation } from '../lib/queries/invitations';
import { fetchOrganizations, organizationKeys } from '../lib/queries/organizations';
import { useSession } from '../lib/session';

type Invitation = Awaited<ReturnType<typeof answerInvitation>>;

const listOrgs = async () => (await fetchOrganizations()).organizations;

/**
 * The page the invitation mail links to (signed-in only: the route sends a visitor to sign-in and
 * back). The API has no read of an invitation for its invitee, so the page knows only the slug
 * until the answer comes back.
 */
export function InvitationScreen() {
  const { slug } = useParams({ from: '/authed/invitations/$slug' });
  const session = useSession();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [busy, setBusy] = useState<'accept' | 'decline' | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [declined, setDeclined] = useState<Invitation | null>(null);

  const answer = async (verb: 'accept' | 'decline') => {
    setBusy(verb);
    setError(null);
    try {
      // The answer does not name the organization: the one that joins the list is it.
      const before = verb === 'accept' ? new Set((await listOrgs()).map((o) => o.slug)) : new Set();
      const inv = await answerInvitation(slug, verb);
      if (verb === 'decline') {
        setDeclined(inv);
        return;
      }
      await qc.invalidateQueries({ queryKey: organizationKeys.all });
      const joined = (await listOrgs()).find((o) => !before.has(o.slug));
      if (joined) await navigate({ to: '/o/$org/runs', params: { org: joined.slug } });
      else await navigate({ to: '/' });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };

  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-md rounded-xl border border-slate-200 bg-white p-6 shadow-sm dark:border-slate-800 dark:bg-slate-900">
        <h1 className="mb-3 text-xl font-semibold">You are invited to an organization</h1>
        <dl className="mb-4 grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 text-sm">
          <dt className="text-slate-600 dark:text-slate-400">Invitation</dt>
          <dd>
            <code>{slug}</code>
          </dd>
          <dt className="text-slate-600 dark:text-slate-400">Signed in as</dt>
          <dd>{session.data?.user.email ?? '…'}</dd>
        </dl>
        <p className="mb-4 text-sm text-slate-700 dark:text-slate-300">
          Only the invited address can answer, and only once it is verified; any other account sees “not
          found”.
        </p>
        <div aria-live="polite" className="space-y-3">
          <ErrorNote error={error} />
          {declined && (
            <p data-testid="invitation-result" className="text-sm">
              Invitation declined.
            </p>
          )}
        </div>
        {!declined && (
          <div className="mt-4 flex gap-2">
            <Button variant="primary" disabled={busy !== null} onClick={() => answer('accept')}>
              {busy === 'accept' ? 'Accepting…' : 'Accept'}
            </Button>
            <Button disabled={busy !== null} onClick={() => answer('decline')}>
              {busy === 'decline' ? 'Declining…' : 'Decline'}
            </Button>
          </div>
        )}
      </div>
    </main>
  );
}
