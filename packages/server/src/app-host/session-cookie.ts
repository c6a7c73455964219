import type { Config } from '../env';

// The cookie holds a random secret (issueSecret); the sessions table stores only its hash, so
// signing out, a password change or the account's deletion ends the session at once, copies
// of the cookie included.

export const SESSION_COOKIE = 'sluice_session';
export const SESSION_TTL_SECONDS = 12 * 3600;

// issueSecret gives 43 base62 characters; anything else cannot be a session and is not looked up.
const SECRET_SHAPE = /^[0-9A-Za-z]{43}$/;

export const sessionSecretOf = (cookie: string | undefined): string | null =>
  cookie && SECRET_SHAPE.test(cookie) ? cookie : null;

/** HttpOnly and SameSite=Strict always; Secure whenever the app is served over https. */
export const sessionCookieOptions = (config: Config) => ({
  httpOnly: true,
  sameSite: 'strict' as const,
  secure: config.publicUrl.startsWith('https:'),
  path: '/',
});
