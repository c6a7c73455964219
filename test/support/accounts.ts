import type { FastifyInstance } from 'fastify';
import type { TestApp } from './app';

export type Account = { slug: string; email: string; password: string; cookie: string; token: string };

/** The session cookie value from a sign-in response, for the next app-host request. */
export function sessionCookieOf(res: { cookies: { name: string; value: string }[] }): string {
  const c = res.cookies.find((k) => k.name === 'sluice_session');
  if (!c) throw new Error('no session cookie was set');
  return c.value;
}

/**
 * A signed-up user with a browser session and a first personal access token, made the way a
 * person would: sign-up on the API host, then sign-in and token creation on the app host.
 */
export async function signUpWithToken(
  t: Pick<TestApp, 'call'>,
  appHost: FastifyInstance,
  o: { email: string; name: string; password?: string },
): Promise<Account> {
  const password = o.password ?? `pw-${o.email}-long-enough`;
  const up = await t.call('POST', '/users', { body: { email: o.email, name: o.name, password } });
  if (up.statusCode !== 201) throw new Error(`sign-up failed: ${up.statusCode} ${up.body}`);
  const signIn = await appHost.inject({
    method: 'POST',
    url: '/session',
    payload: { email: o.email, password },
  });
  if (signIn.statusCode !== 201) throw new Error(`sign-in failed: ${signIn.statusCode} ${signIn.body}`);
  const cookie = sessionCookieOf(signIn);
  const pat = await appHost.inject({
    method: 'POST',
    url: '/session/personal-access-tokens',
    cookies: { sluice_session: cookie },
    headers: { 'x-csrf-token': signIn.json().csrf_token },
    payload: { name: 'first token' },
  });
  if (pat.statusCode !== 201) throw new Error(`token creation failed: ${pat.statusCode} ${pat.body}`);
  return { slug: up.json().slug, email: o.email, password, cookie, token: pat.json().token };
}
