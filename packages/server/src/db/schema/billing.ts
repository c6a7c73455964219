import { sql } from 'drizzle-orm';
import { check, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { id, timestamps } from './columns';
import { users } from './identity';
import { organizations } from './organizations';

// One billing profile per user or per organization; removed with its owner, so an account's
// deletion takes its address along.
export const billingProfiles = pgTable(
  'billing_profiles',
  {
    id: id(),
    userId: uuid('user_id').references(() => users.id, { onDelete: 'cascade' }),
    organizationId: uuid('organization_id').references(() => organizations.id, { onDelete: 'cascade' }),
    billingName: text('billing_name').notNull(),
    billingEmail: text('billing_email').notNull(),
    line1: text('line1').notNull(),
    line2: text('line2'),
    city: text('city').notNull(),
    region: text('region'),
    postalCode: text('postal_code').notNull(),
    country: text('country').notNull(),
    taxId: text('tax_id'),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex('billing_profiles_user_uq').on(t.userId),
    uniqueIndex('billing_profiles_org_uq').on(t.organizationId),
    check('billing_profiles_one_owner', sql`(${t.userId} is null) <> (${t.organizationId} is null)`),
  ],
);
