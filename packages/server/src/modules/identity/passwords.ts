import { hash, verify } from '@node-rs/argon2';
import { issueSecret } from '../../http/tokens';

// Argon2id (algorithm 2) with the library's defaults, as bootstrap hashes too.
const OPTIONS = { algorithm: 2 } as const;

export const hashPassword = (password: string) => hash(password, OPTIONS);

/**
 * Stored instead of a hash for an account created without a password (`sluice setup` or
 * `bootstrap` without `--password-stdin`). No password verifies against it, and the account's
 * owner sets the first one with their own token: `PATCH /users/me` without `current_password`
 * (docs/account.md).
 */
export const NO_PASSWORD = '!no-password';

export const hasPassword = (storedHash: string) => storedHash !== NO_PASSWORD;

let decoy: Promise<string> | null = null;

/**
 * Checks a password against a stored hash. With no hash (unknown account, or one without a
 * password) it still runs one verification against a decoy, so the answer takes as long either way.
 */
export async function checkPassword(storedHash: string | null, password: string): Promise<boolean> {
  decoy ??= hashPassword(issueSecret().secret);
  const known = storedHash !== null && hasPassword(storedHash);
  const target = known ? storedHash : await decoy;
  let ok: boolean;
  try {
    ok = await verify(target, password);
  } catch {
    // A malformed stored hash is a failed sign-in, never a 500 that tells the two apart.
    ok = false;
  }
  return known && ok;
}
