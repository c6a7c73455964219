import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import { z } from 'zod';
import { ConfirmButton } from '../components/confirm';
import { Badge, Button, Card, ErrorNote, InputField, tableClass, tdClass, thClass } from '../components/ui';
import type { BodyOf } from '../lib/api';

import { nameField, slugField } from '../lib/form-fields';
import { deleteRole, permissionsQuery, roleKeys, rolesQuery, saveRole } from '../lib/queries/roles';
import type { Permission, Role, SettingsSearch } from '../lib/settings';

const schema = z.object({
  name: nameField,
  slug: slugField,
  description: z.string().max(2000, 'At most 2000 characters'),
  permissions: z.array(z.string()).max(200),
});
type Values = z.infer<typeof schema>;

/** Permissions grouped by their area (the part before the dot), in catalog order. */
const groups = (list: Permission[]) => {
  const out = new Map<string, Permission[]>();
  for (const p of list) {
    const area = p.name.split('.')[0];
    out.set(area, [...(out.get(area) ?? []), p]);
  }
  return [...out];
};

function RoleForm(props: { org: string; existing?: Role; onDone: () => void }) {
  const { org, existing: r } = props;
  const qc = useQueryClient();
  const catalog = useQuery({ ...permissionsQuery(), staleTime: Infinity });
  const form = useForm<Values>({
    resolver: zodResolver(schema),
    defaultValues: {
      name: r?.name ?? '',
      slug: '',
      description: r?.description ?? '',
      permissions: r?.permissions ?? [],
    },
  });
  const save = useMutation({
    mutationFn: (v: Values) => {
      const body = { name: v.name, description: v.description || null, permissions: v.permissions };
      return saveRole(org, r?.slug ?? null, {
        ...body,
        permissions: body.permissions as BodyOf<'createRoles'>['permissions'],
        ...(!r && v.slug ? { slug: v.slug } : {}),
      });
    },
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: roleKeys.all(org) });
      props.onDone();
    },
  });
  const err = form.formState.errors;
  return (
    <Card title={r ? `Edit the role ${r.name}` : 'New custom role'}>
      <form noValidate onSubmit={form.handleSubmit((v) => save.mutate(v))} className="space-y-4">
        <div className="grid gap-4 sm:grid-cols-2">
          <InputField label="Role name" error={err.name?.message} input={form.register('name')} />
          {!r && (
            <InputField
              label="Role slug (optional)"
              hint="Made from the name when empty."
              error={err.slug?.message}
              input={form.register('slug')}
            />
          )}
        </div>
        <InputField
          label="Description (optional)"
          error={err.description?.message}
          input={form.register('description')}
        />
        <fieldset>
          <legend className="mb-1 text-sm font-semibold">Permissions</legend>
          <p className="mb-2 text-xs text-slate-600 dark:text-slate-400">
            You can grant only permissions you hold yourself.
          </p>
          <ErrorNote error={catalog.error} />
          <div className="grid gap-3 sm:grid-cols-2 lg:grid-cols-3">
            {groups(catalog.data?.permissions ?? []).map(([area, perms]) => (
              <div key={area}>
                <p className="text-xs font-semibold uppercase tracking-wide text-slate-600 dark:text-slate-400">
                  {area}
                </p>
                {perms.map((p) => (
                  <label key={p.name} className="flex items-start gap-2 py-0.5 text-sm" title={p.description}>
                    <input
                      type="checkbox"
                      className="mt-1"
                      value={p.name}
                      {...form.register('permissions')}
                    />
                    <span>
                      <code className="text-xs">{p.name}</code>
                      <span className="block text-xs text-slate-600 dark:text-slate-400">
                        {p.description}
                      </span>
                    </span>
                  </label>
                ))}
              </div>
            ))}
          </div>
        </fieldset>
        <ErrorNote error={save.error} />
        <div className="flex gap-2">
          <Button type="submit" variant="primary" disabled={save.isPending}>
            {r ? 'Save role' : 'Create role'}
          </Button>
          <Button onClick={props.onDone}>Cancel</Button>
        </div>
      </form>
    </Card>
  );
}

/** Built-in roles are fixed; custom roles are created, edited (?role=slug) and deleted here. */
export function Roles(props: { org: string; search: SettingsSearch; onSearch: (s: SettingsSearch) => void }) {
  const { org, search } = props;
  const qc = useQueryClient();
  const roles = useQuery(rolesQuery(org));
  const remove = useMutation({
    mutationFn: (slug: string) => deleteRole(org, slug),
    onSuccess: () => qc.invalidateQueries({ queryKey: roleKeys.all(org) }),
  });
  const editing = search.role === 'new' ? undefined : roles.data?.find((r) => r.slug === search.role);
  return (
    <div className="space-y-4">
      {search.role === 'new' && <RoleForm org={org} onDone={() => props.onSearch({})} />}
      {editing && !editing.built_in && (
        <RoleForm key={editing.slug} org={org} existing={editing} onDone={() => props.onSearch({})} />
      )}
      <Card
        title="Roles"
        actions={
          search.role !== 'new' && (
            <Button variant="primary" onClick={() => props.onSearch({ role: 'new' })}>
              New custom role
            </Button>
          )
        }
      >
        <ErrorNote error={roles.error ?? remove.error} />
        <table className={tableClass}>
          <caption className="sr-only">Roles, built in first</caption>
          <thead>
            <tr>
              {['Role', 'Kind', 'Permissions', 'Actions'].map((h) => (
                <th key={h} scope="col" className={thClass}>
                  {h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {roles.data?.map((r) => (
              <tr key={r.slug} data-role={r.slug}>
                <td className={tdClass}>
                  {r.name}
                  <div className="font-mono text-xs text-slate-600 dark:text-slate-400">{r.slug}</div>
                  {r.description && <div className="text-xs">{r.description}</div>}
                </td>
                <td className={tdClass}>
                  <Badge tone={r.built_in ? 'slate' : 'green'}>{r.built_in ? 'built in' : 'custom'}</Badge>
                </td>
                <td className={`${tdClass} text-xs`}>{r.permissions.join(', ')}</td>
                <td className={`${tdClass} whitespace-nowrap`}>
                  {!r.built_in && (
                    <div className="flex gap-1">
                      <Button
                        variant="ghost"
                        aria-label={`Edit ${r.name}`}
                        onClick={() => props.onSearch({ role: r.slug })}
                      >
                        Edit
                      </Button>
                      <ConfirmButton
                        label="Delete"
                        ariaLabel={`Delete ${r.name}`}
                        title={`Delete the role ${r.name}?`}
                        confirmLabel="Delete role"
                        onConfirm={() => remove.mutate(r.slug)}
                      >
                        A role that a member, a pending invitation or an API key still uses cannot be deleted
                        (409).
                      </ConfirmButton>
                    </div>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Card>
    </div>
  );
}
