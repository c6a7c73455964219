import { createHmac } from 'node:crypto';
import type { Config } from '../env';

// The cookie holds a random secret (issueSecret); the sessions table stores only its hash, so
// signing out, a password change or the account's deletion ends the session at once, copies
// of the cookie included.

export const SESSION_TTL_SECONDS = 12 * 3600;

// issueSecret gives 43 base62 characters; anything else cannot be a session and is not looked up.
const SECRET_SHAPE = /^[0-9A-Za-z]{43}$/;

export const sessionSecretOf = (cookie: string | undefined): string | null =>
  cookie && SECRET_SHAPE.test(cookie) ? cookie : null;

const overHttps = (config: Config) => config.publicUrl.startsWith('https:');

/**
 * `__Host-` over https, so no sibling host can set or overwrite it (it needs Secure, Path=/ and no
 * Domain); browsers refuse `__Host-` on plain http, so http://127.0.0.1 gets the plain name.
 */
export const sessionCookieName = (config: Config) =>
  overHttps(config) ? '__Host-sluice_session' : 'sluice_session';

/**
 * HttpOnly; SameSite=Lax so a link from chat or mail arrives signed in
 * (docs/app.md#backend-for-frontend-session-and-csrf).
 */
export const sessionCookieOptions = (config: Config) => ({
  httpOnly: true,
  sameSite: 'lax' as const,
  secure: overHttps(config),
  path: '/',
});

/**
 * The CSRF token is bound to the session: an HMAC of its secret, so it changes whenever the session
 * does (sign-in rotates it) and needs no storage. Only the page, which read it from GET /session,
 * can send it; another origin cannot read it.
 */
export const csrfTokenOf = (sessionSecret: string): string =>
  createHmac('sha256', sessionSecret).update('sluice-csrf-v1').digest('base64url');
