import { client, unwrap } from '../api';

/** Confirms an e-mail address with the token of the verification mail (no session needed). */
export const verifyEmail = (token: string) =>
  unwrap(client.POST('/users/email-verification', { body: { token } }));

export const userKeys = { verifyEmail: (token: string | undefined) => ['verify-email', token] as const };
