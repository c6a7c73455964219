import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmButton } from '../components/confirm';
import { RolePicker } from '../components/role-picker';
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

import { formatTime } from '../lib/format';
import {
  createInvitation,
  invitationKeys,
  invitationsQuery,
  revokeInvitation,
} from '../lib/queries/invitations';
import { INVITATION_STATUSES, type SettingsSearch } from '../lib/settings';

type Nav = (patch: SettingsSearch) => void;

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
  const qc = useQueryClient();
  const list = useQuery(
    invitationsQuery(org, { status: search.status, cursor: search.cursor, direction: search.direction }),
  );
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('viewer');
  const done = () => qc.invalidateQueries({ queryKey: invitationKeys.all(org) });
  const invite = useMutation({
    mutationFn: () => createInvitation(org, email, role),
    onSuccess: async () => {
      setEmail('');
      await done();
    },
  });
  const revoke = useMutation({ mutationFn: (slug: string) => revokeInvitation(org, slug), onSuccess: done });
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
