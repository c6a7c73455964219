import { and, asc, eq, gt, isNotNull, ne } from 'drizzle-orm';
import type { Db } from '../db/client';
import {
  dataSourceCredentials,
  environmentSecrets,
  oauthAuthorizationRequests,
  organizationOauthGrants,
  pipelineRunInputs,
  proofSigningKeys,
} from '../db/schema/index';
import type { Keyring } from './keyring';

// Every table holding sealed values, with the binding kind its rows were sealed under.
// A new sealed table joins rotation by one entry here.
export const sealedTables = [
  { table: environmentSecrets, kind: 'environment_secret' },
  { table: dataSourceCredentials, kind: 'data_source_credential' },
  { table: pipelineRunInputs, kind: 'pipeline_run_input' },
  { table: organizationOauthGrants, kind: 'organization_oauth_grant' },
  { table: oauthAuthorizationRequests, kind: 'oauth_authorization_request' },
] as const;

/** What a proof signing key is sealed under (the proof module seals with it, rotation re-seals under it). */
export const proofKeyBinding = (keyid: string) => ({
  organizationId: 'deployment',
  kind: 'proof_signing_key',
  recordId: keyid,
});

export type RotationReport = { kid: string; reencrypted: number; tables: Record<string, number> };

const BATCH = 200;

/**
 * Adds a new data key, then re-seals every value under it, batch by batch. Values not yet
 * re-sealed stay readable under their old key throughout, so a crash midway loses nothing and
 * running it again finishes the job.
 */
export async function rotateKeys(db: Db, keyring: Keyring): Promise<RotationReport> {
  const kid = await db.transaction((tx) => keyring.addKey(tx));
  const tables: Record<string, number> = {};
  let total = 0;
  for (const { table, kind } of sealedTables) {
    let after = '00000000-0000-0000-0000-000000000000';
    let count = 0;
    for (;;) {
      const rows = await db
        .select({
          id: table.id,
          organizationId: table.organizationId,
          kid: table.kid,
          ciphertext: table.ciphertext,
        })
        .from(table)
        .where(and(gt(table.id, after), isNotNull(table.ciphertext), ne(table.kid, kid)))
        .orderBy(asc(table.id))
        .limit(BATCH);
      if (rows.length === 0) break;
      await db.transaction(async (tx) => {
        for (const r of rows) {
          const binding = { organizationId: r.organizationId, kind, recordId: r.id };
          const plain = await keyring.decrypt(tx, { kid: r.kid!, ciphertext: r.ciphertext! }, binding);
          const sealed = await keyring.encrypt(tx, plain, binding, kid);
          // Only if nobody rewrote the value meanwhile.
          await tx
            .update(table)
            .set({ kid: sealed.kid, ciphertext: sealed.ciphertext })
            .where(and(eq(table.id, r.id), eq(table.ciphertext, r.ciphertext!)));
        }
      });
      count += rows.length;
      after = rows[rows.length - 1].id;
    }
    tables[kind] = count;
    total += count;
  }
  const proofKeys = await resealProofKeys(db, keyring, kid);
  tables.proof_signing_key = proofKeys;
  total += proofKeys;
  return { kid, reencrypted: total, tables };
}

/** The deployment's proof signing keys (a handful of rows, keyed by keyid, not per organization). */
async function resealProofKeys(db: Db, keyring: Keyring, kid: string): Promise<number> {
  return db.transaction(async (tx) => {
    const rows = await tx.select().from(proofSigningKeys).where(ne(proofSigningKeys.kid, kid));
    for (const r of rows) {
      const binding = proofKeyBinding(r.keyid);
      const plain = await keyring.decrypt(tx, { kid: r.kid, ciphertext: r.sealedPrivateKey }, binding);
      const sealed = await keyring.encrypt(tx, plain, binding, kid);
      await tx
        .update(proofSigningKeys)
        .set({ kid: sealed.kid, sealedPrivateKey: sealed.ciphertext })
        .where(
          and(eq(proofSigningKeys.keyid, r.keyid), eq(proofSigningKeys.sealedPrivateKey, r.sealedPrivateKey)),
        );
    }
    return rows.length;
  });
}
