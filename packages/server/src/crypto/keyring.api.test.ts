import { randomBytes, randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../test/support/app';
import {
  encryptionKeys,
  environmentSecrets,
  environments,
  organizations,
  proofSigningKeys,
} from '../db/schema/index';
import { signingKey } from '../modules/proof/proof-keys';
import { createKeyring, DecryptionError } from './keyring';
import { rotateKeys } from './rotate';

describe('keyring', () => {
  let t: TestApp;
  let orgId: string;
  let envId: string;
  beforeAll(async () => {
    t = await startTestApp();
    await t.bootstrap('crypto-org');
    const db = t.rt.deps.db;
    [{ id: orgId }] = await db
      .select({ id: organizations.id })
      .from(organizations)
      .where(eq(organizations.slug, 'crypto-org'));
    [{ id: envId }] = await db
      .insert(environments)
      .values({ organizationId: orgId, slug: 'prod', name: 'Prod' })
      .returning();
  });
  afterAll(() => t?.close());

  const binding = (recordId: string) => ({ organizationId: orgId, kind: 'environment_secret', recordId });

  it('round-trips and binds a value to its organization and record', async () => {
    const { db, keyring } = t.rt.deps;
    const id = randomUUID();
    const sealed = await keyring.encrypt(db, 'hunter2-canary', binding(id));
    expect(sealed.ciphertext).not.toContain('hunter2');
    expect(await keyring.decrypt(db, sealed, binding(id))).toBe('hunter2-canary');
    await expect(keyring.decrypt(db, sealed, binding(randomUUID()))).rejects.toBeInstanceOf(DecryptionError);
    await expect(
      keyring.decrypt(db, sealed, { ...binding(id), organizationId: randomUUID() }),
    ).rejects.toBeInstanceOf(DecryptionError);
  });

  it('fails loudly on a flipped ciphertext byte', async () => {
    const { db, keyring } = t.rt.deps;
    const id = randomUUID();
    const sealed = await keyring.encrypt(db, 'value', binding(id));
    const raw = Buffer.from(sealed.ciphertext, 'base64');
    raw[raw.length - 1] ^= 0x01;
    await expect(
      keyring.decrypt(db, { ...sealed, ciphertext: raw.toString('base64') }, binding(id)),
    ).rejects.toThrow(/could not be decrypted/);
  });

  it('rotation re-seals every value under a new key and keeps all readable', async () => {
    const { db, keyring } = t.rt.deps;
    const values = new Map<string, string>();
    for (let i = 0; i < 450; i++) {
      const id = randomUUID();
      const value = `secret-${i}-${randomBytes(6).toString('hex')}`;
      const sealed = await keyring.encrypt(db, value, binding(id));
      await db
        .insert(environmentSecrets)
        .values({ id, organizationId: orgId, environmentId: envId, key: `K${i}`, ...sealed });
      values.set(id, value);
    }
    const before = (await db.select().from(environmentSecrets))[0].kid;
    const report = await rotateKeys(db, keyring);
    expect(report.kid).not.toBe(before);
    expect(report.tables.environment_secret).toBe(450);
    const rows = await db.select().from(environmentSecrets);
    expect(new Set(rows.map((r) => r.kid))).toEqual(new Set([report.kid]));
    for (const r of rows) expect(await keyring.decrypt(db, r, binding(r.id))).toBe(values.get(r.id));
    // The old key is retired, not deleted: values sealed under it elsewhere still open.
    const keys = await db.select().from(encryptionKeys);
    expect(keys.filter((k) => k.active).map((k) => k.kid)).toEqual([report.kid]);
    expect(keys.some((k) => k.kid === before && k.retiredAt)).toBe(true);
  });

  it('rotation re-seals the proof signing key, which still signs as the same key', async () => {
    const { db, keyring } = t.rt.deps;
    const before = await signingKey(t.rt.deps);
    const report = await rotateKeys(db, keyring);
    expect(report.tables.proof_signing_key).toBe(1);
    const [row] = await db.select().from(proofSigningKeys);
    expect(row.kid).toBe(report.kid);
    const after = await signingKey(t.rt.deps);
    expect(after.keyid).toBe(before.keyid);
    const pem = (k: typeof before) => k.privateKey.export({ format: 'pem', type: 'pkcs8' });
    expect(pem(after)).toEqual(pem(before));
  });

  it('refuses to start with a different master key', async () => {
    const other = createKeyring(randomBytes(32));
    await expect(other.ensureActiveKey(t.rt.deps.db)).rejects.toBeInstanceOf(DecryptionError);
  });
});
