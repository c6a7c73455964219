import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { desc, eq, sql } from 'drizzle-orm';
import type { Deps } from '../../context';
import { proofKeyBinding } from '../../crypto/rotate';
import type { DbOrTx } from '../../db/client';
import { proofSigningKeys } from '../../db/schema/index';
import { iso } from '../../http/fields';
import { keyidOf } from './dsse';

// The deployment signs receipts with one active Ed25519 key, made at the first start (so a
// verifier can pin it before any receipt exists) and kept sealed by the keyring (under the
// master key); every process that shares the store signs with the same key. Rotating it
// retires the active key (kept, with the time it stopped signing) and makes a new one.

const KEY_LOCK = 0x51_1ce_15;
export type SigningKey = { keyid: string; privateKey: KeyObject };
type KeyRow = typeof proofSigningKeys.$inferSelect;

async function activeKey(db: DbOrTx) {
  const [row] = await db.select().from(proofSigningKeys).where(eq(proofSigningKeys.active, true)).limit(1);
  return row ?? null;
}

async function insertKey(deps: Deps, tx: DbOrTx): Promise<KeyRow> {
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
}

/** The active key's row, created under a lock when the deployment has none yet. */
async function ensureActiveRow(deps: Deps): Promise<KeyRow> {
  return (
    (await activeKey(deps.db)) ??
    (await deps.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(${KEY_LOCK})`);
      return (await activeKey(tx)) ?? insertKey(deps, tx);
    }))
  );
}

/** Makes the deployment's signing key if it has none; every process start calls it. */
export async function ensureSigningKey(deps: Deps): Promise<string> {
  return (await ensureActiveRow(deps)).keyid;
}

/** The active signing key (made here too, should the store have lost it since the start). */
export async function signingKey(deps: Deps): Promise<SigningKey> {
  const row = await ensureActiveRow(deps);
  const pem = await deps.keyring.decrypt(
    deps.db,
    { kid: row.kid, ciphertext: row.sealedPrivateKey },
    proofKeyBinding(row.keyid),
  );
  return { keyid: row.keyid, privateKey: createPrivateKey(pem) };
}

/**
 * Retires the active signing key and makes a new one, in one transaction: receipts compiled
 * after it are signed with the new key; the old public key stays listed (with `valid_until`)
 * so receipts it signed stay verifiable.
 */
export async function rotateSigningKey(deps: Deps): Promise<{ retired: string | null; keyid: string }> {
  return deps.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${KEY_LOCK})`);
    const old = await activeKey(tx);
    if (old)
      await tx
        .update(proofSigningKeys)
        .set({ active: false, retiredAt: sql`now()` })
        .where(eq(proofSigningKeys.keyid, old.keyid));
    const created = await insertKey(deps, tx);
    return { retired: old?.keyid ?? null, keyid: created.keyid };
  });
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
    valid_from: iso(r.createdAt),
    valid_until: r.retiredAt ? iso(r.retiredAt) : null,
  }));
}
