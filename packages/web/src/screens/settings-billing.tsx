import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import { z } from 'zod';
import { COUNTRY_CODES, CountrySelect } from '../components/country-select';
import { Button, Card, ErrorNote, Field, Input } from '../components/ui';
import { formatTime } from '../lib/format';
import {
  type BillingOwner,
  type BillingProfile,
  billingProfileQuery,
  putBillingProfile,
} from '../lib/queries/billing';

// The API's bounds (billing.schemas.ts); optional fields are sent as null when left empty.
const text = (max: number, what: string) =>
  z.string().trim().min(1, `Enter the ${what}`).max(max, `At most ${max} characters`);
const optional = (max: number) => z.string().trim().max(max, `At most ${max} characters`);
const schema = z.object({
  billing_name: text(100, 'name invoices are made out to'),
  billing_email: z.string().trim().min(3).max(255).email('Enter an email address'),
  line1: text(255, 'first address line'),
  line2: optional(255),
  city: text(120, 'city'),
  region: optional(120),
  postal_code: text(32, 'postal code'),
  country: z.string().refine((c) => COUNTRY_CODES.has(c), 'Choose a country'),
  tax_id: optional(64),
});
type Values = z.infer<typeof schema>;

type Profile = BillingProfile;

const empty: Values = {
  billing_name: '',
  billing_email: '',
  line1: '',
  line2: '',
  city: '',
  region: '',
  postal_code: '',
  country: '',
  tax_id: '',
};

const toValues = (p: Profile): Values => ({
  billing_name: p.billing_name,
  billing_email: p.billing_email,
  line1: p.address.line1,
  line2: p.address.line2 ?? '',
  city: p.address.city,
  region: p.address.region ?? '',
  postal_code: p.address.postal_code,
  country: p.country,
  tax_id: p.tax_id ?? '',
});

function ProfileForm(props: { owner: BillingOwner; initial: Profile | null; idPrefix: string }) {
  const qc = useQueryClient();
  const form = useForm<Values>({
    resolver: zodResolver(schema),
    defaultValues: props.initial ? toValues(props.initial) : empty,
  });
  const save = useMutation({
    mutationFn: (v: Values) =>
      putBillingProfile(props.owner, {
        billing_name: v.billing_name,
        billing_email: v.billing_email,
        address: {
          line1: v.line1,
          line2: v.line2 || null,
          city: v.city,
          region: v.region || null,
          postal_code: v.postal_code,
        },
        country: v.country,
        tax_id: v.tax_id || null,
      }),
    onSuccess: (p) => qc.setQueryData(billingProfileQuery(props.owner).queryKey, p),
  });
  const err = form.formState.errors;
  const input = (name: keyof Values, label: string, opts: { type?: string; autoComplete?: string } = {}) => (
    <Field label={label} error={err[name]?.message}>
      {({ id, describedBy, invalid }) => (
        <Input
          id={id}
          aria-describedby={describedBy}
          aria-invalid={invalid}
          {...opts}
          {...form.register(name)}
        />
      )}
    </Field>
  );
  return (
    <form noValidate onSubmit={form.handleSubmit((v) => save.mutate(v))} className="space-y-4">
      <div className="grid gap-4 sm:grid-cols-2">
        {input('billing_name', 'Billing name', { autoComplete: 'organization' })}
        {input('billing_email', 'Billing email', { type: 'email', autoComplete: 'email' })}
        {input('line1', 'Address line 1', { autoComplete: 'address-line1' })}
        {input('line2', 'Address line 2 (optional)', { autoComplete: 'address-line2' })}
        {input('city', 'City', { autoComplete: 'address-level2' })}
        {input('region', 'State or region (optional)', { autoComplete: 'address-level1' })}
        {input('postal_code', 'Postal code', { autoComplete: 'postal-code' })}
        <Field label="Country" error={err.country?.message}>
          {({ id, describedBy, invalid }) => (
            <CountrySelect
              id={id}
              aria-describedby={describedBy}
              aria-invalid={invalid}
              autoComplete="country"
              {...form.register('country')}
            />
          )}
        </Field>
        {input('tax_id', 'Tax or VAT ID (optional)')}
      </div>
      <ErrorNote error={save.error} />
      {save.isSuccess && (
        <p role="status" className="text-sm text-emerald-800 dark:text-emerald-300">
          Saved {formatTime(save.data.updated_at)}.
        </p>
      )}
      <Button type="submit" variant="primary" disabled={save.isPending}>
        Save billing profile
      </Button>
    </form>
  );
}

/** A profile that was never saved reads as 404: that is an empty form, not an error. */
function ProfileCard(props: { title: string; hint: string; owner: BillingOwner; idPrefix: string }) {
  const profile = useQuery(billingProfileQuery(props.owner));
  return (
    <section aria-labelledby={`${props.idPrefix}-title`}>
      <Card
        title={<span id={`${props.idPrefix}-title`}>{props.title}</span>}
        actions={
          profile.data === null ? (
            <span className="text-xs text-slate-600 dark:text-slate-400">not set yet</span>
          ) : profile.data ? (
            <span className="text-xs text-slate-600 dark:text-slate-400">
              updated {formatTime(profile.data.updated_at)}
            </span>
          ) : null
        }
      >
        <p className="mb-3 text-sm text-slate-600 dark:text-slate-400">{props.hint}</p>
        <ErrorNote error={profile.error} />
        {profile.data !== undefined && (
          <ProfileForm owner={props.owner} initial={profile.data} idPrefix={props.idPrefix} />
        )}
      </Card>
    </section>
  );
}

export function Billing({ org }: { org: string }) {
  return (
    <div className="space-y-4">
      <ProfileCard
        title="Organization billing profile"
        hint={`Invoices for ${org} are made out to and mailed here.`}
        owner={{ org }}
        idPrefix="org-billing"
      />
      <ProfileCard
        title="Your billing profile"
        hint="Yours alone, for what you pay personally; other members never see it."
        owner={{ org: null }}
        idPrefix="user-billing"
      />
    </div>
  );
}
