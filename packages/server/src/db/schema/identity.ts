import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { id, timestamps, ts } from './columns';

export const users = pgTable(
  'users',
  {
    id: id(),
    slug: text('slug').notNull(),
    email: text('email').notNull(),
    name: text('name').notNull(),
    passwordHash: text('password_hash').notNull(),
    emailVerifiedAt: ts('email_verified_at'),
    ...timestamps(),
  },
  (t) => [uniqueIndex('users_slug_uq').on(t.slug), uniqueIndex('users_email_uq').on(t.email)],
);

export const emailVerificationTokens = pgTable(
  'email_verification_tokens',
  {
    id: id(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('email_verification_tokens_hash_uq').on(t.tokenHash),
    index('evt_user_idx').on(t.userId),
  ],
);

export const personalAccessTokens = pgTable(
  'personal_access_tokens',
  {
    id: id(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    tokenPrefix: text('token_prefix').notNull(),
    tokenHash: text('token_hash').notNull(),
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
    lastUsedAt: ts('last_used_at'),
    ...timestamps(),
  },
  (t) => [uniqueIndex('pat_user_slug_uq').on(t.userId, t.slug), uniqueIndex('pat_hash_uq').on(t.tokenHash)],
);

/** App-host browser sessions: the cookie holds a random secret, only its hash is stored. */
export const sessions = pgTable(
  'sessions',
  {
    id: id(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    expiresAt: ts('expires_at').notNull(),
    lastSeenAt: ts('last_seen_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('sessions_hash_uq').on(t.tokenHash), index('sessions_user_idx').on(t.userId)],
);

/**
 * Account deletion requests outlive the account they delete (user_id is nulled), so a completed
 * or failed request can still be reported.
 */
export const accountDeletionRequests = pgTable(
  'account_deletion_requests',
  {
    id: id(),
    slug: text('slug').notNull(),
    userId: uuid('user_id').references(() => users.id, { onDelete: 'set null' }),
    userSlug: text('user_slug').notNull(),
    state: text('state').notNull(),
    ownershipRequired: jsonb('ownership_required').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    organizationRemovalRequired: jsonb('organization_removal_required')
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    failureReason: text('failure_reason'),
    requestedAt: ts('requested_at').notNull().defaultNow(),
    completedAt: ts('completed_at'),
    ...timestamps(),
  },
  (t) => [uniqueIndex('account_deletion_requests_slug_uq').on(t.slug), index('adr_user_idx').on(t.userId)],
);
