import { queryOptions, useQuery } from '@tanstack/react-query';
import { ApiError, sessionRequest, setCsrfToken } from './api';
import type { Session } from './types';

/** Who is signed in, or null; reading it also picks up the CSRF token of the session. */
export const sessionKeys = { session: ['session'] as const };

export const sessionQuery = queryOptions({
  queryKey: sessionKeys.session,
  queryFn: async (): Promise<Session | null> => {
    try {
      const s = (await sessionRequest('GET')) as Session;
      setCsrfToken(s.csrf_token);
      return s;
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return null;
      throw e;
    }
  },
  staleTime: 60_000,
});

export const useSession = () => useQuery(sessionQuery);

export async function signIn(email: string, password: string): Promise<Session> {
  const s = (await sessionRequest('POST', { email, password })) as Session;
  setCsrfToken(s.csrf_token);
  return s;
}

export async function signOut(): Promise<void> {
  await sessionRequest('DELETE');
  setCsrfToken('');
}
