import { hash, verify } from '@node-rs/argon2';
import { issueSecret } from '../../http/tokens';

// Argon2id (algorithm 2) with the library's defaults, as bootstrap hashes too.
const OPTIONS = { algorithm: 2 } as const;

export const hashPassword = (password: string) => hash(password, OPTIONS);

let decoy: Promise<string> | null = null;

/**
 * Checks a password against a stored hash. With no hash (unknown account) it still runs one
 * verification against a decoy, so the answer takes as long whether or not the account exists.
 */
export async function checkPassword(storedHash: string | null, password: string): Promise<boolean> {
  decoy ??= hashPassword(issueSecret().secret);
  const target = storedHash ?? (await decoy);
  let ok: boolean;
  try {
    ok = await verify(target, password);
  } catch {
    // A malformed stored hash is a failed sign-in, never a 500 that tells the two apart.
    ok = false;
  }
  return storedHash !== null && ok;
}
