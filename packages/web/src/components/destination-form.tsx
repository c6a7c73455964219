import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import { z } from 'zod';
import type { Destination } from '../lib/alerts';
import { emailField, nameField, slugField, splitList } from '../lib/form-fields';
import { alertKeys, createDestination, updateDestination } from '../lib/queries/alerts';
import { Button, Card, ErrorNote, Field, InputField } from './ui';

const schema = z.object({
  name: nameField,
  slug: slugField,
  recipients: z.string().superRefine((v, ctx) => {
    const list = splitList(v);
    if (list.length === 0) ctx.addIssue({ code: 'custom', message: 'Enter at least one address' });
    if (list.length > 50) ctx.addIssue({ code: 'custom', message: 'At most 50 addresses' });
    const bad = list.filter((a) => !emailField.safeParse(a).success);
    if (bad.length) ctx.addIssue({ code: 'custom', message: `Not an email address: ${bad.join(', ')}` });
  }),
  enabled: z.boolean(),
});
type Values = z.infer<typeof schema>;

/** Create or edit an email destination; a failed save keeps every input. */
export function DestinationForm(props: { org: string; existing?: Destination; onSaved: () => void }) {
  const qc = useQueryClient();
  const e = props.existing;
  const form = useForm<Values>({
    resolver: zodResolver(schema),
    defaultValues: {
      name: e?.name ?? '',
      slug: '',
      recipients: e?.non_secret_config.recipients.join('\n') ?? '',
      enabled: e?.enabled ?? true,
    },
  });
  const save = useMutation({
    mutationFn: (v: Values) => {
      const non_secret_config = { recipients: splitList(v.recipients) };
      return e
        ? updateDestination(props.org, e.slug, {
            name: v.name,
            non_secret_config,
            enabled: v.enabled,
          })
        : createDestination(props.org, {
            name: v.name,
            ...(v.slug ? { slug: v.slug } : {}),
            type: 'email',
            non_secret_config,
            enabled: v.enabled,
          });
    },
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: alertKeys.destinations(props.org) });
      props.onSaved();
    },
  });
  const err = form.formState.errors;
  return (
    <Card title={e ? 'Edit destination' : 'Email destination'}>
      <form noValidate onSubmit={form.handleSubmit((v) => save.mutate(v))} className="space-y-4">
        <InputField label="Name" error={err.name?.message} input={form.register('name')} />
        {!e && (
          <InputField
            label="Slug (optional)"
            hint="Made from the name when empty. Policies and the CLI refer to the destination by it."
            error={err.slug?.message}
            input={form.register('slug')}
          />
        )}
        <Field
          label="Recipients"
          hint="One address per line (or separated by commas), 1 to 50."
          error={err.recipients?.message}
        >
          {({ id, describedBy, invalid }) => (
            <textarea
              id={id}
              rows={4}
              aria-describedby={describedBy}
              aria-invalid={invalid}
              className="block w-full rounded-md border border-slate-300 bg-white px-2.5 py-1.5 font-mono text-sm text-slate-900 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-100"
              {...form.register('recipients')}
            />
          )}
        </Field>
        <label className="flex items-center gap-2 text-sm">
          <input type="checkbox" {...form.register('enabled')} /> Enabled (a disabled destination receives
          nothing)
        </label>
        <ErrorNote error={save.error} />
        <Button type="submit" variant="primary" disabled={save.isPending}>
          {e ? 'Save destination' : 'Create destination'}
        </Button>
      </form>
    </Card>
  );
}
