import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { desc, eq, sql } from 'drizzle-orm';
import type { Deps } from '../../context';
import type { DbOrTx } from '../../db/client';
import { proofSigningKeys } from '../../db/schema/index';
import { iso } from '../../http/fields';
import { keyidOf } from './dsse';

// The deployment signs receipts with one Ed25519 key, made on first use and kept sealed by the
// keyring (under the master key); every process that shares the store signs with the same key.

const KEY_LOCK = 0x51_1ce_15;
/** What a proof signing key is sealed under (key rotation re-seals it under the same binding). */
export const proofKeyBinding = (keyid: string) => ({
  organizationId: 'deployment',
  kind: 'proof_signing_key',
  recordId: keyid,
});

export type SigningKey = { keyid: string; privateKey: KeyObject };

async function activeKey(db: DbOrTx) {
  const [row] = await db.select().from(proofSigningKeys).where(eq(proofSigningKeys.active, true)).limit(1);
  return row ?? null;
}

/** The active signing key, created once per deployment under a lock. */
export async function signingKey(deps: Deps): Promise<SigningKey> {
  const row =
    (await activeKey(deps.db)) ??
    (await deps.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(${KEY_LOCK})`);
      const existing = await activeKey(tx);
      if (existing) return existing;
      const { publicKey, privateKey } = generateKeyPairSync('ed25519');
      const keyid = keyidOf(publicKey);
      const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
      const sealed = await deps.keyring.encrypt(tx, pem, proofKeyBinding(keyid));
      const [created] = await tx
        .insert(proofSigningKeys)
        .values({
          keyid,
          publicKey: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
          kid: sealed.kid,
          sealedPrivateKey: sealed.ciphertext,
        })
        .returning();
      return created;
    }));
  const pem = await deps.keyring.decrypt(
    deps.db,
    { kid: row.kid, ciphertext: row.sealedPrivateKey },
    proofKeyBinding(row.keyid),
  );
  return { keyid: row.keyid, privateKey: createPrivateKey(pem) };
}

/** Every public key that ever signed, newest first (older receipts stay verifiable). */
export async function listPublicKeys(db: DbOrTx) {
  const rows = await db.select().from(proofSigningKeys).orderBy(desc(proofSigningKeys.createdAt));
  return rows.map((r) => ({
    keyid: r.keyid,
    algorithm: 'ed25519' as const,
    public_key_pem: r.publicKey,
    active: r.active,
    created_at: iso(r.createdAt),
  }));
}
