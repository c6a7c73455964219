import { queryOptions, useQuery } from '@tanstack/react-query';
import { ApiError, request, setCsrfToken } from './api';
import type { Session } from './types';

/** Who is signed in, or null; reading it also picks up the CSRF token of the session. */
export const sessionQuery = queryOptions({
  queryKey: ['session'],
  queryFn: async (): Promise<Session | null> => {
    try {
      const s = await request<Session>('GET', '/session');
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
  const s = await request<Session>('POST', '/session', { email, password });
  setCsrfToken(s.csrf_token);
  return s;
}

export async function signOut(): Promise<void> {
  await request<void>('DELETE', '/session');
  setCsrfToken('');
}
