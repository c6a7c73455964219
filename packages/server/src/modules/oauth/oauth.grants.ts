import { and, desc, eq, inArray } from 'drizzle-orm';
import type { Deps } from '../../context';
import type { DbOrTx } from '../../db/client';
import type { dataSources } from '../../db/schema/index';
import { dataSourceCredentials, organizationOauthGrants } from '../../db/schema/index';

/** The data source row an OAuth grant belongs to (the data-sources module owns the table). */
type DataSourceRow = typeof dataSources.$inferSelect;

import type { OAuthProvider, TokenBundle } from './oauth.providers';

// Where an OAuth grant is kept: a data source's own credential row, or the organization's
// shared grant of a provider (`organization_gitlab_connection`). Both tables have the same
// lifecycle columns, so the token code below works on either through a GrantRef.

export type OAuthMetadata = {
  provider: OAuthProvider;
  scopes: string[];
  account: string | null;
  access_token_expires_at: string | null;
  last_refreshed_at: string | null;
  revoked_at: string | null;
  failure_code: string | null;
  failure_message: string | null;
};

export type GrantRow = {
  id: string;
  organizationId: string;
  status: string;
  kid: string | null;
  ciphertext: string | null;
  oauth: Record<string, unknown> | null;
  updatedAt: Date;
  kind?: string;
};

export type GrantRef = { place: 'data_source' | 'organization'; row: GrantRow };

const CURRENT = ['active', 'failed', 'pending', 'revoked'];

export const emptyMetadata = (provider: OAuthProvider): OAuthMetadata => ({
  provider,
  scopes: [],
  account: null,
  access_token_expires_at: null,
  last_refreshed_at: null,
  revoked_at: null,
  failure_code: null,
  failure_message: null,
});

export const grantBinding = (ref: GrantRef) => ({
  organizationId: ref.row.organizationId,
  kind: ref.place === 'data_source' ? 'data_source_credential' : 'organization_oauth_grant',
  recordId: ref.row.id,
});

// Both tables share these columns; one typed view keeps the queries below simple.
const tableOf = (place: GrantRef['place']) =>
  (place === 'data_source'
    ? dataSourceCredentials
    : organizationOauthGrants) as unknown as typeof organizationOauthGrants;

/** The organization's current shared grant of a provider, or null. */
export async function currentOrganizationGrant(db: DbOrTx, organizationId: string, provider: OAuthProvider) {
  const [row] = await db
    .select()
    .from(organizationOauthGrants)
    .where(
      and(
        eq(organizationOauthGrants.organizationId, organizationId),
        eq(organizationOauthGrants.provider, provider),
        inArray(organizationOauthGrants.status, CURRENT),
      ),
    )
    .orderBy(desc(organizationOauthGrants.createdAt))
    .limit(1);
  return row ?? null;
}

/** The grant a data source authenticates with: the org's shared one when it opted in. */
export async function grantOf(
  db: DbOrTx,
  row: DataSourceRow,
  provider: OAuthProvider,
  ownCredential: GrantRow | null,
): Promise<GrantRef | null> {
  if (row.organizationGitlabConnection) {
    const shared = await currentOrganizationGrant(db, row.organizationId, provider);
    return shared ? { place: 'organization', row: shared } : null;
  }
  return ownCredential ? { place: 'data_source', row: ownCredential } : null;
}

export async function reloadGrant(db: DbOrTx, ref: GrantRef): Promise<GrantRef | null> {
  const t = tableOf(ref.place);
  const [row] = await db.select().from(t).where(eq(t.id, ref.row.id)).limit(1);
  return row ? { place: ref.place, row } : null;
}

export async function openBundle(db: DbOrTx, deps: Pick<Deps, 'keyring'>, ref: GrantRef) {
  if (!ref.row.ciphertext || !ref.row.kid) return null;
  const plain = await deps.keyring.decrypt(
    db,
    { kid: ref.row.kid, ciphertext: ref.row.ciphertext },
    grantBinding(ref),
  );
  return JSON.parse(plain) as TokenBundle;
}

export const metadataOf = (ref: GrantRef, provider: OAuthProvider): OAuthMetadata => ({
  ...emptyMetadata(provider),
  ...(ref.row.oauth as Partial<OAuthMetadata> | null),
});

/**
 * Stores refreshed tokens only if nobody replaced them meanwhile (compare-and-set on the
 * ciphertext); returns false when another refresh won.
 */
export async function storeRefreshed(
  db: DbOrTx,
  deps: Pick<Deps, 'keyring'>,
  ref: GrantRef,
  bundle: TokenBundle,
  oauth: OAuthMetadata,
): Promise<boolean> {
  const t = tableOf(ref.place);
  const sealed = await deps.keyring.encrypt(db, JSON.stringify(bundle), grantBinding(ref));
  const updated = await db
    .update(t)
    .set({
      kid: sealed.kid,
      ciphertext: sealed.ciphertext,
      oauth,
      status: 'active',
      updatedAt: new Date(),
    })
    .where(
      and(
        eq(t.id, ref.row.id),
        eq(t.ciphertext, ref.row.ciphertext ?? ''),
        inArray(t.status, ['active', 'failed']),
      ),
    )
    .returning({ id: t.id });
  return updated.length > 0;
}

/** active -> failed with the failure recorded; true only for the call that made the change. */
export async function markFailed(db: DbOrTx, ref: GrantRef, oauth: OAuthMetadata): Promise<boolean> {
  const t = tableOf(ref.place);
  const updated = await db
    .update(t)
    .set({ status: 'failed', oauth, updatedAt: new Date() })
    .where(and(eq(t.id, ref.row.id), eq(t.status, 'active')))
    .returning({ id: t.id });
  return updated.length > 0;
}

/** Tokens are forgotten (not just flagged) when a grant is revoked. */
export async function markRevoked(db: DbOrTx, ref: GrantRef, oauth: OAuthMetadata) {
  const t = tableOf(ref.place);
  await db
    .update(t)
    .set({ status: 'revoked', kid: null, ciphertext: null, oauth, updatedAt: new Date() })
    .where(eq(t.id, ref.row.id));
}

/** Replaces the current grant of a place with a new active one; returns the new row. */
export async function storeNewGrant(
  db: DbOrTx,
  deps: Pick<Deps, 'keyring'>,
  o: {
    place: GrantRef['place'];
    organizationId: string;
    dataSourceId: string;
    provider: OAuthProvider;
    bundle: TokenBundle;
    oauth: OAuthMetadata;
  },
): Promise<GrantRow> {
  const now = new Date();
  const id = crypto.randomUUID();
  const ref: GrantRef = {
    place: o.place,
    row: {
      id,
      organizationId: o.organizationId,
      status: 'active',
      kid: null,
      ciphertext: null,
      oauth: null,
      updatedAt: now,
    },
  };
  const sealed = await deps.keyring.encrypt(db, JSON.stringify(o.bundle), grantBinding(ref));
  if (o.place === 'data_source') {
    await db
      .update(dataSourceCredentials)
      .set({ status: 'rotated', updatedAt: now })
      .where(
        and(
          eq(dataSourceCredentials.dataSourceId, o.dataSourceId),
          inArray(dataSourceCredentials.status, CURRENT),
        ),
      );
    const [row] = await db
      .insert(dataSourceCredentials)
      .values({
        id,
        organizationId: o.organizationId,
        dataSourceId: o.dataSourceId,
        kind: 'oauth2_grant',
        status: 'active',
        kid: sealed.kid,
        ciphertext: sealed.ciphertext,
        oauth: o.oauth,
      })
      .returning();
    return row;
  }
  await db
    .update(organizationOauthGrants)
    .set({ status: 'rotated', updatedAt: now })
    .where(
      and(
        eq(organizationOauthGrants.organizationId, o.organizationId),
        eq(organizationOauthGrants.provider, o.provider),
        inArray(organizationOauthGrants.status, CURRENT),
      ),
    );
  const [row] = await db
    .insert(organizationOauthGrants)
    .values({
      id,
      organizationId: o.organizationId,
      provider: o.provider,
      status: 'active',
      kid: sealed.kid,
      ciphertext: sealed.ciphertext,
      oauth: o.oauth,
    })
    .returning();
  return row;
}
