import { eq, getTableColumns, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { billingProfiles } from '../../db/schema/index';
import { countryOf, type PutBillingProfile } from './billing.schemas';

export type BillingProfileRow = typeof billingProfiles.$inferSelect;
export type BillingOwner = { userId: string } | { organizationId: string };

const ownerColumn = (owner: BillingOwner) =>
  'userId' in owner
    ? eq(billingProfiles.userId, owner.userId)
    : eq(billingProfiles.organizationId, owner.organizationId);

export async function findProfile(db: DbOrTx, owner: BillingOwner): Promise<BillingProfileRow | null> {
  const [row] = await db.select().from(billingProfiles).where(ownerColumn(owner)).limit(1);
  return row ?? null;
}

const columnsOf = (input: PutBillingProfile) => ({
  billingName: input.billing_name,
  billingEmail: input.billing_email,
  line1: input.address.line1,
  line2: input.address.line2 ?? null,
  city: input.address.city,
  region: input.address.region ?? null,
  postalCode: input.address.postal_code,
  country: countryOf(input),
  taxId: input.tax_id ?? null,
});

/** Creates or replaces the owner's profile; `created` tells which. */
export async function upsertProfile(
  db: DbOrTx,
  owner: BillingOwner,
  input: PutBillingProfile,
): Promise<{ row: BillingProfileRow; created: boolean }> {
  const values = columnsOf(input);
  const target = 'userId' in owner ? billingProfiles.userId : billingProfiles.organizationId;
  const [row] = await db
    .insert(billingProfiles)
    .values({ ...owner, ...values })
    .onConflictDoUpdate({ target, set: { ...values, updatedAt: new Date() } })
    // xmax is 0 only on a row version this statement inserted (not one it updated).
    .returning({ ...getTableColumns(billingProfiles), inserted: sql<boolean>`(xmax = 0)` });
  const { inserted, ...profile } = row;
  return { row: profile, created: inserted };
}
