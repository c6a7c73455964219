import type { Keyring } from '../../crypto/keyring';
import type { DbOrTx } from '../../db/client';
import * as repo from './secrets.repo';

// Run-time access to environment secrets, for the pipeline executor and validation. Nothing
// here is reachable over HTTP: values leave the store only to be substituted into an outbound
// call at the moment it is made.

/** Binding kind of environment secrets; the rotation table in crypto/rotate.ts uses the same. */
export const SECRET_KIND = 'environment_secret';

export const secretBinding = (organizationId: string, recordId: string) => ({
  organizationId,
  kind: SECRET_KIND,
  recordId,
});

/**
 * Every secret of an environment, decrypted: `{KEY: value}`. Throws `DecryptionError` (never
 * returns garbage) when a value was tampered with, copied from another record or sealed under a
 * key this master key cannot open. Pass the transaction when called inside one.
 */
export async function resolveSecrets(
  db: DbOrTx,
  keyring: Keyring,
  organizationId: string,
  environmentId: string,
): Promise<Record<string, string>> {
  const rows = await repo.sealedSecrets(db, organizationId, environmentId);
  const entries: [string, string][] = [];
  for (const r of rows) {
    entries.push([r.key, await keyring.decrypt(db, r, secretBinding(organizationId, r.id))]);
  }
  // fromEntries defines own properties, so a key named __proto__ stays an ordinary entry.
  return Object.fromEntries(entries);
}

/** The secret keys of an environment (no values), sorted; for "referenced secrets exist" checks. */
export function secretKeys(db: DbOrTx, organizationId: string, environmentId: string): Promise<string[]> {
  return repo.secretKeys(db, organizationId, environmentId);
}
