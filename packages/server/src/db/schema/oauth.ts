import { bigint, index, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { id, timestamps, ts } from './columns';
import { dataSources } from './connections';
import { organizations } from './organizations';

/**
 * One OAuth authorization code request (docs/oauth.md). The `state` sent to the provider is
 * stored only as its SHA-256 hash; the PKCE code verifier is sealed with the keyring. A row is
 * used once (`used_at`) and dies at `expires_at`.
 */
export const oauthAuthorizationRequests = pgTable(
  'oauth_authorization_requests',
  {
    id: id(),
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    dataSourceId: uuid('data_source_id')
      .notNull()
      .references(() => dataSources.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    /** `data_source`: the grant becomes the source's credential; `organization`: the shared one. */
    target: text('target').notNull().default('data_source'),
    stateHash: text('state_hash').notNull(),
    kid: text('kid').notNull(),
    /** The sealed PKCE code verifier. */
    ciphertext: text('ciphertext').notNull(),
    connectionRevision: bigint('connection_revision', { mode: 'number' }).notNull(),
    redirectUri: text('redirect_uri').notNull(),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    actorType: text('actor_type').notNull(),
    actorSlug: text('actor_slug'),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('oauth_authorization_requests_state_uq').on(t.stateHash),
    index('oauth_authorization_requests_expiry_idx').on(t.expiresAt),
  ],
);

/**
 * The organization-level OAuth grant of a hosted git provider, shared by every data source of
 * that provider with `organization_gitlab_connection: true`. Same lifecycle as a data source
 * credential: the newest row not `rotated`/`revoked` is the current one.
 */
export const organizationOauthGrants = pgTable(
  'organization_oauth_grants',
  {
    id: id(),
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    status: text('status').notNull(),
    kid: text('kid'),
    ciphertext: text('ciphertext'),
    oauth: jsonb('oauth').$type<Record<string, unknown> | null>(),
    ...timestamps(),
  },
  (t) => [index('organization_oauth_grants_org_idx').on(t.organizationId, t.provider, t.createdAt)],
);
