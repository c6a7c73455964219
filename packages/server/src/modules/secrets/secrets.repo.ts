import { and, eq, type SQL, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { environmentSecrets } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type SecretRow = typeof environmentSecrets.$inferSelect;
/** Everything but the sealed value: what listing and responses read. */
export type SecretMeta = Omit<SecretRow, 'kid' | 'ciphertext'>;

const meta = {
  id: environmentSecrets.id,
  organizationId: environmentSecrets.organizationId,
  environmentId: environmentSecrets.environmentId,
  key: environmentSecrets.key,
  description: environmentSecrets.description,
  createdAt: environmentSecrets.createdAt,
  updatedAt: environmentSecrets.updatedAt,
};

// Cursor identifiers must look like slugs; a key (`API_TOKEN`) does not, its lowercase hex does,
// and hex keeps the byte order of the key, so it is a valid tiebreak.
const keyHex: SQL = sql`encode(convert_to(${environmentSecrets.key}, 'UTF8'), 'hex')`;
// Keys are identifiers: order them by code point on every store, not by the database locale.
const keyOrder: SQL = sql`${environmentSecrets.key} collate "C"`;
const hexOf = (key: string) => Buffer.from(key, 'utf8').toString('hex');

export async function listSecrets(db: DbOrTx, environmentId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: {
      environment_secret_created_at: { column: environmentSecrets.createdAt, kind: 'timestamp' },
      environment_secret_updated_at: { column: environmentSecrets.updatedAt, kind: 'timestamp' },
      environment_secret_key: { column: keyOrder, kind: 'text' },
    },
    tiebreak: keyHex,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select(meta)
        .from(environmentSecrets)
        .where(and(eq(environmentSecrets.environmentId, environmentId), where))
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({
      value:
        query.sort_by === 'environment_secret_key'
          ? r.key
          : query.sort_by === 'environment_secret_updated_at'
            ? r.updatedAt
            : r.createdAt,
      id: hexOf(r.key),
    }),
  });
}

export async function findSecret(db: DbOrTx, environmentId: string, key: string): Promise<SecretMeta | null> {
  const [row] = await db
    .select(meta)
    .from(environmentSecrets)
    .where(and(eq(environmentSecrets.environmentId, environmentId), eq(environmentSecrets.key, key)))
    .limit(1);
  return row ?? null;
}

/** The sealed rows of an environment, for resolving at run time only. */
export async function sealedSecrets(db: DbOrTx, organizationId: string, environmentId: string) {
  return db
    .select({
      id: environmentSecrets.id,
      key: environmentSecrets.key,
      kid: environmentSecrets.kid,
      ciphertext: environmentSecrets.ciphertext,
    })
    .from(environmentSecrets)
    .where(
      and(
        eq(environmentSecrets.organizationId, organizationId),
        eq(environmentSecrets.environmentId, environmentId),
      ),
    )
    .orderBy(keyOrder);
}

export async function secretKeys(db: DbOrTx, organizationId: string, environmentId: string) {
  const rows = await db
    .select({ key: environmentSecrets.key })
    .from(environmentSecrets)
    .where(
      and(
        eq(environmentSecrets.organizationId, organizationId),
        eq(environmentSecrets.environmentId, environmentId),
      ),
    )
    .orderBy(keyOrder);
  return rows.map((r) => r.key);
}

export async function insertSecret(db: DbOrTx, values: typeof environmentSecrets.$inferInsert) {
  const [row] = await db.insert(environmentSecrets).values(values).returning(meta);
  return row;
}

export async function updateSecret(
  db: DbOrTx,
  id: string,
  values: Pick<SecretRow, 'kid' | 'ciphertext'> & { description?: string | null },
) {
  const [row] = await db
    .update(environmentSecrets)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(environmentSecrets.id, id))
    .returning(meta);
  return row;
}

export async function deleteSecret(db: DbOrTx, id: string) {
  await db.delete(environmentSecrets).where(eq(environmentSecrets.id, id));
}
