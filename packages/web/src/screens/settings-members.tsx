import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { ConfirmButton } from '../components/confirm';
import {
  Badge,
  Button,
  Card,
  Empty,
  ErrorNote,
  Field,
  Input,
  Pager,
  Select,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';
import { api, type Page } from '../lib/api';
import { formatTime } from '../lib/format';
import { useSession } from '../lib/session';
import {
  INVITATION_STATUSES,
  type Invitation,
  type Member,
  type SettingsSearch,
  useRoles,
} from '../lib/settings';

type Nav = (patch: SettingsSearch) => void;

function RolePicker(props: {
  id: string;
  value: string;
  onChange: (v: string) => void;
  org: string;
  label?: string;
}) {
  const roles = useRoles(props.org);
  return (
    <Select
      id={props.id}
      aria-label={props.label}
      value={props.value}
      onChange={(e) => props.onChange(e.target.value)}
    >
      {!roles.data?.some((r) => r.slug === props.value) && <option value={props.value}>{props.value}</option>}
      {roles.data?.map((r) => (
        <option key={r.slug} value={r.slug}>
          {r.name}
          {r.built_in ? '' : ' (custom)'}
        </option>
      ))}
    </Select>
  );
}

function MemberRow({ org, m, me }: { org: string; m: Member; me: boolean }) {
  const qc = useQueryClient();
  const [role, setRole] = useState(m.role);
  const path = `/organizations/${org}/members/${m.user_slug}`;
  const done = () => qc.invalidateQueries({ queryKey: ['members', org] });
  const change = useMutation({ mutationFn: () => api.patch<Member>(path, { role }), onSuccess: done });
  const navigate = useNavigate();
  const remove = useMutation({
    mutationFn: () => api.del(path),
    // Leaving ends access to this organization: go to the next one the user belongs to.
    onSuccess: async () => {
      if (!me) return done();
      await qc.invalidateQueries({ queryKey: ['organizations'] });
      await navigate({ to: '/' });
    },
  });
  return (
    <tr data-member={m.user_slug}>
      <td className={tdClass}>
        {m.name}
        {me && <span className="ml-1 text-xs text-slate-600 dark:text-slate-400">(you)</span>}
      </td>
      <td className={tdClass}>{m.email}</td>
      <td className={tdClass}>
        <div className="flex items-center gap-2">
          <RolePicker
            id={`role-${m.user_slug}`}
            label={`Role of ${m.email}`}
            org={org}
            value={role}
            onChange={setRole}
          />
          <ConfirmButton
            variant="secondary"
            label="Change role"
            ariaLabel={`Change role of ${m.email}`}
            disabled={role === m.role || change.isPending}
            title={`Change the role of ${m.email}?`}
            confirmLabel={`Make ${role}`}
            onConfirm={() => change.mutate()}
          >
            {m.name} becomes <strong>{role}</strong> (now {m.role}). It applies to their next request.
          </ConfirmButton>
        </div>
        <ErrorNote error={change.error ?? remove.error} />
      </td>
      <td className={`${tdClass} whitespace-nowrap text-xs`}>{formatTime(m.created_at)}</td>
      <td className={tdClass}>
        <ConfirmButton
          label={me ? 'Leave' : 'Remove'}
          ariaLabel={me ? 'Leave the organization' : `Remove ${m.email}`}
          title={me ? `Leave ${org}?` : `Remove ${m.email} from ${org}?`}
          confirmLabel={me ? 'Leave organization' : 'Remove member'}
          onConfirm={() => remove.mutate()}
        >
          {me
            ? 'You lose access to this organization until someone invites you again.'
            : 'They lose access at once. Their API keys and past actions stay.'}
        </ConfirmButton>
      </td>
    </tr>
  );
}

export function Members({ org, search, onSearch }: { org: string; search: SettingsSearch; onSearch: Nav }) {
  const session = useSession();
  const list = useQuery({
    queryKey: ['members', org, search.cursor, search.direction],
    queryFn: () =>
      api.get<Page<'members', Member>>(`/organizations/${org}/members`, {
        limit: 50,
        cursor: search.cursor,
        direction: search.direction,
      }),
  });
  return (
    <Card title="Members">
      <ErrorNote error={list.error} />
      <table className={tableClass}>
        <caption className="sr-only">Members of the organization</caption>
        <thead>
          <tr>
            {['Name', 'Email', 'Role', 'Since', 'Actions'].map((h) => (
              <th key={h} scope="col" className={thClass}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {list.data?.members.map((m) => (
            <MemberRow
              key={`${m.user_slug}:${m.role}`}
              org={org}
              m={m}
              me={m.user_slug === session.data?.user.slug}
            />
          ))}
        </tbody>
      </table>
      {list.data && (
        <Pager
          hasMore={list.data.has_more}
          hasPrev={Boolean(search.cursor)}
          onNext={() => onSearch({ cursor: list.data.next_cursor ?? undefined, direction: 'next' })}
          onPrev={() => onSearch({ cursor: list.data.prev_cursor ?? undefined, direction: 'prev' })}
        />
      )}
    </Card>
  );
}

const statusTone = (s: string) =>
  s === 'pending' ? 'amber' : s === 'accepted' || s === 'auto_accepted' ? 'green' : ('slate' as const);

export function Invitations({
  org,
  search,
  onSearch,
}: {
  org: string;
  search: SettingsSearch;
  onSearch: Nav;
}) {
  const path = `/organizations/${org}/invitations`;
  const qc = useQueryClient();
  const list = useQuery({
    queryKey: ['invitations', org, search.status, search.cursor, search.direction],
    queryFn: () =>
      api.get<Page<'invitations', Invitation>>(path, {
        limit: 50,
        status: search.status,
        cursor: search.cursor,
        direction: search.direction,
      }),
  });
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('viewer');
  const done = () => qc.invalidateQueries({ queryKey: ['invitations', org] });
  const invite = useMutation({
    mutationFn: () => api.post<Invitation>(path, { email, role }),
    onSuccess: async () => {
      setEmail('');
      await done();
    },
  });
  const revoke = useMutation({ mutationFn: (slug: string) => api.del(`${path}/${slug}`), onSuccess: done });
  return (
    <div className="space-y-4">
      <Card title="Invite someone">
        <form
          noValidate
          className="flex flex-wrap items-end gap-3"
          onSubmit={(e) => {
            e.preventDefault();
            invite.mutate();
          }}
        >
          <Field label="Email">
            {({ id }) => (
              <Input id={id} type="email" value={email} onChange={(e) => setEmail(e.target.value)} />
            )}
          </Field>
          <Field label="Role">
            {({ id }) => <RolePicker id={id} org={org} value={role} onChange={setRole} />}
          </Field>
          <Button type="submit" variant="primary" disabled={!email || invite.isPending}>
            Send invitation
          </Button>
        </form>
        <p className="mt-2 text-xs text-slate-600 dark:text-slate-400">
          The invitation is mailed with a link to accept; it expires after a week. Someone who is already a
          member is accepted at once.
        </p>
        <div className="mt-2">
          <ErrorNote error={invite.error ?? revoke.error} />
        </div>
      </Card>
      <Card
        title="Invitations"
        actions={
          <div className="flex items-center gap-2">
            <label htmlFor="inv-status" className="text-xs font-medium">
              Status
            </label>
            <Select
              id="inv-status"
              className="w-40"
              value={search.status ?? ''}
              onChange={(e) => onSearch({ status: e.target.value || undefined })}
            >
              <option value="">Any</option>
              {INVITATION_STATUSES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </Select>
          </div>
        }
      >
        <ErrorNote error={list.error} />
        {list.data?.invitations.length === 0 && <Empty>No invitation matches.</Empty>}
        <table className={tableClass}>
          <caption className="sr-only">Invitations, newest first</caption>
          <thead>
            <tr>
              {['Email', 'Role', 'Status', 'Sent', 'Expires', 'Actions'].map((h) => (
                <th key={h} scope="col" className={thClass}>
                  {h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {list.data?.invitations.map((i) => (
              <tr key={i.slug} data-invitation={i.slug}>
                <td className={tdClass}>{i.email}</td>
                <td className={tdClass}>{i.role}</td>
                <td className={tdClass}>
                  <Badge tone={statusTone(i.status)}>{i.status}</Badge>
                </td>
                <td className={`${tdClass} whitespace-nowrap text-xs`}>{formatTime(i.created_at)}</td>
                <td className={`${tdClass} whitespace-nowrap text-xs`}>{formatTime(i.expires_at)}</td>
                <td className={tdClass}>
                  {i.status === 'pending' && (
                    <ConfirmButton
                      label="Revoke"
                      ariaLabel={`Revoke the invitation of ${i.email}`}
                      title={`Revoke the invitation of ${i.email}?`}
                      confirmLabel="Revoke invitation"
                      onConfirm={() => revoke.mutate(i.slug)}
                    >
                      The link in their mail stops working. You can invite them again later.
                    </ConfirmButton>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {list.data && (
          <Pager
            hasMore={list.data.has_more}
            hasPrev={Boolean(search.cursor)}
            onNext={() =>
              onSearch({
                status: search.status,
                cursor: list.data.next_cursor ?? undefined,
                direction: 'next',
              })
            }
            onPrev={() =>
              onSearch({
                status: search.status,
                cursor: list.data.prev_cursor ?? undefined,
                direction: 'prev',
              })
            }
          />
        )}
      </Card>
    </div>
  );
}
