import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../db/client';
import { encryptionKeys } from '../db/schema/index';
import { randomSuffix } from '../http/fields';

// Envelope encryption: values are sealed with a data key (DEK); DEKs are stored wrapped by the
// master key. Each sealed value names its DEK (`kid`), so a rotation can add a DEK while values
// sealed under older ones stay readable until they are re-encrypted.

export type Sealed = { kid: string; ciphertext: string };
/** Binds a value to where it lives, so a ciphertext copied to another record fails to open. */
export type Binding = { organizationId: string; kind: string; recordId: string };

export class DecryptionError extends Error {
  constructor() {
    super('stored secret could not be decrypted (wrong key or tampered data)');
  }
}

const IV = 12;
const TAG = 16;

function seal(key: Buffer, plaintext: Buffer, aad: string): string {
  const iv = randomBytes(IV);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64');
}

function open(key: Buffer, blob: string, aad: string): Buffer {
  const raw = Buffer.from(blob, 'base64');
  if (raw.length < IV + TAG) throw new DecryptionError();
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(raw.subarray(IV, IV + TAG));
    return Buffer.concat([decipher.update(raw.subarray(IV + TAG)), decipher.final()]);
  } catch {
    throw new DecryptionError();
  }
}

const bindingAad = (b: Binding) => `sluice:v1:${b.organizationId}:${b.kind}:${b.recordId}`;
const dekAad = (kid: string) => `sluice:dek:${kid}`;

export type Keyring = {
  /** Seals under the active DEK (or `kid`); `db` is the caller's transaction when there is one. */
  encrypt(db: DbOrTx, plaintext: string, binding: Binding, kid?: string): Promise<Sealed>;
  decrypt(db: DbOrTx, sealed: Sealed, binding: Binding): Promise<string>;
  /** Makes sure an active DEK exists; run once at start, outside any transaction. */
  ensureActiveKey(db: Db): Promise<string>;
  /** Adds a new active DEK and retires the current one (still readable); returns its kid. */
  addKey(db: DbOrTx): Promise<string>;
};

const ACTIVE_KEY_LOCK = 0x51_1ce_03;

export function createKeyring(masterKey: Buffer): Keyring {
  const cache = new Map<string, Buffer>();

  async function load(db: DbOrTx, kid: string): Promise<Buffer> {
    const hit = cache.get(kid);
    if (hit) return hit;
    const [row] = await db.select().from(encryptionKeys).where(eq(encryptionKeys.kid, kid)).limit(1);
    if (!row) throw new DecryptionError();
    const dek = open(masterKey, row.wrappedKey, dekAad(kid));
    cache.set(kid, dek);
    return dek;
  }

  async function activeKid(db: DbOrTx): Promise<string | null> {
    const [row] = await db
      .select({ kid: encryptionKeys.kid })
      .from(encryptionKeys)
      .where(eq(encryptionKeys.active, true))
      .limit(1);
    return row?.kid ?? null;
  }

  async function addKey(db: DbOrTx): Promise<string> {
    const kid = `k-${new Date().toISOString().slice(0, 10).replaceAll('-', '')}-${randomSuffix(8)}`;
    const dek = randomBytes(32);
    await db
      .update(encryptionKeys)
      .set({ active: false, retiredAt: new Date() })
      .where(eq(encryptionKeys.active, true));
    await db
      .insert(encryptionKeys)
      .values({ kid, wrappedKey: seal(masterKey, dek, dekAad(kid)), active: true });
    cache.set(kid, dek);
    return kid;
  }

  return {
    async encrypt(db, plaintext, binding, given) {
      // Read the active kid each time: another process may have rotated.
      const kid = given ?? (await activeKid(db));
      if (!kid) throw new Error('no active encryption key; the keyring was not initialised');
      return {
        kid,
        ciphertext: seal(await load(db, kid), Buffer.from(plaintext, 'utf8'), bindingAad(binding)),
      };
    },
    async decrypt(db, sealed, binding) {
      return open(await load(db, sealed.kid), sealed.ciphertext, bindingAad(binding)).toString('utf8');
    },
    async ensureActiveKey(db) {
      return db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(${ACTIVE_KEY_LOCK})`);
        const kid = await activeKid(tx);
        if (kid) {
          await load(tx, kid); // fails loudly now, not at first use, when the master key is wrong
          return kid;
        }
        return addKey(tx);
      });
    },
    addKey,
  };
}
