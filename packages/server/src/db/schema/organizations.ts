import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { id, timestamps, ts } from './columns';
import { users } from './identity';

export const organizations = pgTable(
  'organizations',
  {
    id: id(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    plan: text('plan').notNull().default('trial'),
    trialEndsAt: ts('trial_ends_at'),
    eventLogRetentionDays: integer('event_log_retention_days').notNull().default(30),
    ...timestamps(),
  },
  (t) => [uniqueIndex('organizations_slug_uq').on(t.slug)],
);

const orgRef = () =>
  uuid('organization_id')
    .notNull()
    .references(() => organizations.id, { onDelete: 'cascade' });

export const roles = pgTable(
  'roles',
  {
    id: id(),
    organizationId: orgRef(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    permissions: jsonb('permissions').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    ...timestamps(),
  },
  (t) => [uniqueIndex('roles_org_slug_uq').on(t.organizationId, t.slug)],
);

export const members = pgTable(
  'members',
  {
    id: id(),
    organizationId: orgRef(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: text('role').notNull(),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex('members_org_user_uq').on(t.organizationId, t.userId),
    index('members_user_idx').on(t.userId),
  ],
);

export const invitations = pgTable(
  'invitations',
  {
    id: id(),
    organizationId: orgRef(),
    slug: text('slug').notNull(),
    email: text('email').notNull(),
    role: text('role').notNull(),
    status: text('status').notNull().default('pending'),
    invitedByUserId: uuid('invited_by_user_id').references(() => users.id, { onDelete: 'set null' }),
    expiresAt: ts('expires_at').notNull(),
    respondedAt: ts('responded_at'),
    ...timestamps(),
  },
  (t) => [uniqueIndex('invitations_slug_uq').on(t.slug), index('invitations_org_idx').on(t.organizationId)],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: id(),
    organizationId: orgRef(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    tokenPrefix: text('token_prefix').notNull(),
    tokenHash: text('token_hash').notNull(),
    role: text('role').notNull(),
    canManageApiKeys: boolean('can_manage_api_keys').notNull().default(false),
    createdByUserId: uuid('created_by_user_id').references(() => users.id, { onDelete: 'set null' }),
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
    lastUsedAt: ts('last_used_at'),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex('api_keys_org_slug_uq').on(t.organizationId, t.slug),
    uniqueIndex('api_keys_hash_uq').on(t.tokenHash),
  ],
);
