import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useSearch } from '@tanstack/react-router';
import { useEffect, useRef } from 'react';
import { ErrorNote } from '../components/ui';
import { userKeys, verifyEmail } from '../lib/queries/users';
import { sessionKeys, sessionQuery } from '../lib/session';

/**
 * The page the verification mail links to. It confirms on arrival: the token is single use, so it
 * is sent once per page (a query, not an effect, so a re-render or strict-mode remount reuses the
 * answer instead of spending the token twice and reporting it "used").
 */
export function VerifyEmail() {
  const { token } = useSearch({ from: '/verify-email' });
  const qc = useQueryClient();
  const verify = useQuery({
    queryKey: userKeys.verifyEmail(token),
    enabled: Boolean(token),
    retry: false,
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: Number.POSITIVE_INFINITY,
    refetchOnWindowFocus: false,
    queryFn: async () => {
      // A visitor who is signed in must send the session's CSRF token; reading the session sets it.
      await qc.fetchQuery(sessionQuery);
      const user = await verifyEmail(token ?? '');
      await qc.invalidateQueries({ queryKey: sessionKeys.session });
      return user;
    },
  });
  const heading = useRef<HTMLHeadingElement>(null);
  const done = verify.isSuccess || verify.isError || !token;
  useEffect(() => {
    // Move focus to the outcome so a screen reader announces it.
    if (done) heading.current?.focus();
  }, [done]);
  const title = !token
    ? 'No verification token'
    : verify.isSuccess
      ? 'Email address verified'
      : verify.isError
        ? 'Could not verify the email address'
        : 'Verifying your email address…';
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-md rounded-xl border border-slate-200 bg-white p-6 shadow-sm dark:border-slate-800 dark:bg-slate-900">
        <h1 ref={heading} tabIndex={-1} className="mb-3 text-xl font-semibold outline-none">
          {title}
        </h1>
        <div aria-live="polite" className="space-y-3 text-sm">
          {!token && (
            <p>The link has no token. Open the link from the verification mail exactly as it was sent.</p>
          )}
          {verify.isSuccess && (
            <p data-testid="verify-result">
              <strong>{verify.data.email}</strong> is confirmed. You can now accept invitations sent to it.
            </p>
          )}
          {verify.isError && (
            <>
              <ErrorNote error={verify.error} />
              <p>
                Links work once and expire. Sign in and ask for a new mail with{' '}
                <code>POST /users/me/email-verification:resend</code>.
              </p>
            </>
          )}
        </div>
        {done && (
          <p className="mt-5 text-sm">
            <Link
              to="/sign-in"
              className="font-medium text-blue-700 underline hover:text-blue-900 dark:text-blue-300 dark:hover:text-blue-200"
            >
              Sign in
            </Link>
          </p>
        )}
      </div>
    </main>
  );
}
