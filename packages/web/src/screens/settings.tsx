import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { type ReactNode, useState } from 'react';
import {
  Badge,
  Button,
  Card,
  ErrorNote,
  Field,
  Input,
  PageHeader,
  Select,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';
import { formatTime } from '../lib/format';
import { useEnvironments } from '../lib/hooks';
import { apiKeyKeys, apiKeysQuery, createApiKey, revokeApiKey } from '../lib/queries/api-keys';
import {
  createEnvironment,
  environmentSecretsQuery,
  organizationKeys,
  putEnvironmentSecret,
} from '../lib/queries/organizations';
import { rolesQuery } from '../lib/queries/roles';
import type { SettingsSearch } from '../lib/settings';
import { Billing } from './settings-billing';
import { Invitations } from './settings-invitations';
import { Members } from './settings-members';
import { Roles } from './settings-roles';

function Table<Row>(props: {
  columns: string[];
  rows: Row[];
  render: (r: Row) => ReactNode[];
  rowKey: (r: Row) => string;
}) {
  return (
    <table className={tableClass}>
      <thead>
        <tr>
          {props.columns.map((c) => (
            <th key={c} scope="col" className={thClass}>
              {c}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((r) => (
          <tr key={props.rowKey(r)}>
            {props.render(r).map((cell, i) => (
              <td key={props.columns[i]} className={tdClass}>
                {cell}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ApiKeys({ org }: { org: string }) {
  const keys = useQuery(apiKeysQuery(org));
  const roles = useQuery(rolesQuery(org));
  const qc = useQueryClient();
  const [name, setName] = useState('');
  const [role, setRole] = useState('developer');
  const create = useMutation({
    mutationFn: () => createApiKey(org, name, role),
    onSuccess: () => qc.invalidateQueries({ queryKey: apiKeyKeys.all(org) }),
  });
  const revoke = useMutation({
    mutationFn: (slug: string) => revokeApiKey(org, slug),
    onSuccess: () => qc.invalidateQueries({ queryKey: apiKeyKeys.all(org) }),
  });
  return (
    <div className="space-y-4">
      <Card title="Create an API key">
        <div className="flex flex-wrap items-end gap-3">
          <Field label="Name">
            {({ id }) => <Input id={id} value={name} onChange={(e) => setName(e.target.value)} />}
          </Field>
          <Field label="Role">
            {({ id }) => (
              <Select id={id} value={role} onChange={(e) => setRole(e.target.value)}>
                {roles.data?.map((r) => (
                  <option key={String(r.slug)} value={String(r.slug)}>
                    {String(r.name)}
                  </option>
                ))}
              </Select>
            )}
          </Field>
          <Button variant="primary" onClick={() => create.mutate()} disabled={!name || create.isPending}>
            Create key
          </Button>
        </div>
        {create.data && (
          <div
            role="status"
            className="mt-3 rounded-md border border-amber-300 bg-amber-50 p-3 text-sm dark:border-amber-800 dark:bg-amber-950"
          >
            <p className="font-semibold">Copy this token now: it is shown once and never again.</p>
            <code className="mt-1 block break-all" data-testid="new-token">
              {String(create.data.token)}
            </code>
          </div>
        )}
        <ErrorNote error={create.error ?? revoke.error} />
      </Card>
      <Card title="API keys">
        <Table
          columns={['Name', 'Role', 'Prefix', 'Last used', 'Status', '']}
          rows={keys.data ?? []}
          rowKey={(r) => String(r.slug)}
          render={(r) => [
            String(r.name),
            String(r.role),
            <code key="p">{String(r.token_prefix)}</code>,
            formatTime(r.last_used_at as string | null),
            r.revoked_at ? (
              <Badge key="s" tone="red">
                revoked
              </Badge>
            ) : (
              <Badge key="s" tone="green">
                active
              </Badge>
            ),
            r.revoked_at ? null : (
              <Button
                key="r"
                variant="ghost"
                onClick={() => revoke.mutate(String(r.slug))}
                aria-label={`Revoke ${String(r.name)}`}
              >
                Revoke
              </Button>
            ),
          ]}
        />
      </Card>
    </div>
  );
}

function Environments({ org }: { org: string }) {
  const envs = useEnvironments(org);
  const qc = useQueryClient();
  const [name, setName] = useState('');
  const [prot, setProt] = useState(false);
  const create = useMutation({
    mutationFn: () => createEnvironment(org, { name, protected: prot }),
    onSuccess: () => qc.invalidateQueries({ queryKey: organizationKeys.environments(org) }),
  });
  return (
    <div className="space-y-4">
      <Card title="Create an environment">
        <div className="flex flex-wrap items-end gap-3">
          <Field label="Name">
            {({ id }) => <Input id={id} value={name} onChange={(e) => setName(e.target.value)} />}
          </Field>
          <label className="flex items-center gap-2 text-sm">
            <input type="checkbox" checked={prot} onChange={(e) => setProt(e.target.checked)} /> Protected
          </label>
          <Button variant="primary" onClick={() => create.mutate()} disabled={!name}>
            Create
          </Button>
        </div>
        <ErrorNote error={create.error} />
      </Card>
      <Card title="Environments">
        <Table
          columns={['Name', 'Slug', 'Protected']}
          rows={envs.data?.environments ?? []}
          rowKey={(r) => String(r.slug)}
          render={(r) => [
            String(r.name),
            <code key="s">{String(r.slug)}</code>,
            r.protected ? (
              <Badge key="p" tone="amber">
                protected
              </Badge>
            ) : (
              'no'
            ),
          ]}
        />
      </Card>
    </div>
  );
}

function Secrets({ org, env, onEnv }: { org: string; env?: string; onEnv: (e: string) => void }) {
  const envs = useEnvironments(org);
  const current = env ?? envs.data?.environments[0]?.slug;
  const environment = envs.data?.environments.find((e) => e.slug === current);
  const at = { organization: org, environment: current ?? '' };
  const list = useQuery({ ...environmentSecretsQuery(at), enabled: Boolean(current) });
  const qc = useQueryClient();
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const put = useMutation({
    mutationFn: () =>
      putEnvironmentSecret(at, key, {
        value,
        ...(environment?.protected ? { protected_environment_confirmation: confirmation } : {}),
      }),
    onSuccess: () => {
      setValue('');
      return qc.invalidateQueries({ queryKey: organizationKeys.secrets(at) });
    },
  });
  return (
    <div className="space-y-4">
      <div className="max-w-xs">
        <Field label="Environment">
          {({ id }) => (
            <Select id={id} value={current ?? ''} onChange={(e) => onEnv(e.target.value)}>
              {envs.data?.environments.map((e) => (
                <option key={e.slug} value={e.slug}>
                  {e.name}
                </option>
              ))}
            </Select>
          )}
        </Field>
      </div>
      <Card title="Set a secret (write-only: values are never shown)">
        <div className="flex flex-wrap items-end gap-3">
          <Field label="Key">
            {({ id }) => <Input id={id} value={key} onChange={(e) => setKey(e.target.value)} />}
          </Field>
          <Field label="Value">
            {({ id }) => (
              <Input
                id={id}
                type="password"
                autoComplete="new-password"
                value={value}
                onChange={(e) => setValue(e.target.value)}
              />
            )}
          </Field>
          {environment?.protected && (
            <Field label={`Type ${environment.slug} to confirm`}>
              {({ id }) => (
                <Input id={id} value={confirmation} onChange={(e) => setConfirmation(e.target.value)} />
              )}
            </Field>
          )}
          <Button variant="primary" onClick={() => put.mutate()} disabled={!key || !value}>
            Save secret
          </Button>
        </div>
        <ErrorNote error={put.error} />
      </Card>
      <Card title="Secrets">
        <Table
          columns={['Key', 'Updated']}
          rows={list.data ?? []}
          rowKey={(r) => String(r.key)}
          render={(r) => [<code key="k">{String(r.key)}</code>, formatTime(r.updated_at as string)]}
        />
      </Card>
    </div>
  );
}

const TITLES: Record<string, string> = {
  'api-keys': 'API keys',
  members: 'Members',
  invitations: 'Invitations',
  roles: 'Roles',
  environments: 'Environments',
  secrets: 'Secrets',
  billing: 'Billing',
};

export function Settings() {
  const { org, section } = useParams({ from: '/authed/o/$org/settings/$section' });
  const search = useSearch({ from: '/authed/o/$org/settings/$section' });
  const navigate = useNavigate({ from: '/o/$org/settings/$section' });
  // A section's filters and cursor live in the query string; a new filter starts at page one.
  const onSearch = (patch: SettingsSearch) => navigate({ search: patch });
  return (
    <div className="max-w-5xl">
      <PageHeader title={TITLES[section] ?? 'Settings'} />
      {section === 'api-keys' && <ApiKeys org={org} />}
      {section === 'members' && <Members org={org} search={search} onSearch={onSearch} />}
      {section === 'invitations' && <Invitations org={org} search={search} onSearch={onSearch} />}
      {section === 'roles' && <Roles org={org} search={search} onSearch={onSearch} />}
      {section === 'billing' && <Billing org={org} />}
      {section === 'environments' && <Environments org={org} />}
      {section === 'secrets' && (
        <Secrets org={org} env={search.env} onEnv={(env) => navigate({ search: { env } })} />
      )}
      {!TITLES[section] && <p>Unknown settings section.</p>}
    </div>
  );
}
