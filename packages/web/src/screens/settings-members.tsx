import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { ConfirmButton } from '../components/confirm';
import { RolePicker } from '../components/role-picker';
import { Card, CursorPager, ErrorNote, tableClass, tdClass, thClass } from '../components/ui';

import { formatTime } from '../lib/format';
import { memberKeys, membersQuery, removeMember, updateMember } from '../lib/queries/members';
import { organizationKeys } from '../lib/queries/organizations';
import { useSession } from '../lib/session';
import type { Member, SettingsSearch } from '../lib/settings';

type Nav = (patch: SettingsSearch) => void;

function MemberRow({ org, m, me }: { org: string; m: Member; me: boolean }) {
  const qc = useQueryClient();
  const [role, setRole] = useState(m.role);
  const done = () => qc.invalidateQueries({ queryKey: memberKeys.all(org) });
  const change = useMutation({ mutationFn: () => updateMember(org, m.user_slug, role), onSuccess: done });
  const navigate = useNavigate();
  const remove = useMutation({
    mutationFn: () => removeMember(org, m.user_slug),
    // Leaving ends access to this organization: go to the next one the user belongs to.
    onSuccess: async () => {
      if (!me) return done();
      await qc.invalidateQueries({ queryKey: organizationKeys.all });
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
  const list = useQuery(membersQuery(org, { cursor: search.cursor, direction: search.direction }));
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
      <CursorPager page={list.data} cursor={search.cursor} go={onSearch} />
    </Card>
  );
}
