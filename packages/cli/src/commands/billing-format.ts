import type { paths } from '@sluice/client';
import { printLines } from '../io';

type Profile = paths['/users/me/billing-profile']['get']['responses'][200]['content']['application/json'];

export function printBillingProfile(p: Profile) {
  const a = p.address;
  printLines([
    `owner:   ${p.owner_type} ${p.owner_slug}`,
    `name:    ${p.billing_name}`,
    `email:   ${p.billing_email}`,
    `address: ${[a.line1, a.line2, `${a.postal_code} ${a.city}`, a.region, p.country].filter(Boolean).join(', ')}`,
    `tax id:  ${p.tax_id ?? '-'}`,
    `updated: ${p.updated_at}`,
  ]);
}
