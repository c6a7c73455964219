import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { AlertsNav } from '../components/alerts-nav';
import { ConfirmButton } from '../components/confirm';
import { PolicyForm } from '../components/policy-form';
import {
  Badge,
  Button,
  Card,
  CursorPager,
  Empty,
  ErrorNote,
  PageHeader,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';
import type { Policy } from '../lib/alerts';

import { formatTime } from '../lib/format';
import { alertKeys, deletePolicy, policiesQuery, policyQuery } from '../lib/queries/alerts';

const linkClass = 'text-blue-700 hover:underline dark:text-blue-300';

const where = (p: Policy) =>
  p.scope === 'organization'
    ? 'organization'
    : p.scope === 'project'
      ? `project ${p.project_slug}`
      : p.scope === 'project_environment'
        ? `${p.project_slug} / ${p.environment_slug}`
        : 'unknown';

const filters = (p: Policy) =>
  (
    [
      ['type', p.notification_type],
      ['severity', p.severity],
      ['state', p.lifecycle_state],
      ['source', [p.source_kind, p.source_action].filter(Boolean).join(' ') || null],
      ['involving', p.source_ref],
    ] as const
  ).filter(([, v]) => v);

/** Alert policies: which notifications go to which destinations. */
export function PoliciesList() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const search = useSearch({ from: '/authed/o/$org/alerts/policies' });
  const navigate = useNavigate();
  const qc = useQueryClient();
  const list = useQuery(policiesQuery(org, search));
  const remove = useMutation({
    mutationFn: (slug: string) => deletePolicy(org, slug),
    onSuccess: () => qc.invalidateQueries({ queryKey: alertKeys.policies(org) }),
  });
  const page = (cursor: string | null, direction: 'next' | 'prev') =>
    navigate({
      to: '/o/$org/alerts/policies',
      params: { org },
      search: { cursor: cursor ?? undefined, direction },
    });
  const rows = list.data?.alert_policies ?? [];
  return (
    <div className="max-w-6xl">
      <AlertsNav org={org} />
      <PageHeader
        title="Alert policies"
        subtitle="A notification is sent to the destinations of every enabled policy it matches, once per destination."
        actions={
          <Link to="/o/$org/alerts/policies/new" params={{ org }} className={`${linkClass} text-sm`}>
            New policy
          </Link>
        }
      />
      <div className="mb-3">
        <ErrorNote error={list.error ?? remove.error} />
      </div>
      <Card>
        {list.data && rows.length === 0 ? (
          <Empty>
            No policy yet, so no alert is mailed.{' '}
            <Link to="/o/$org/alerts/policies/new" params={{ org }} className={linkClass}>
              Create one
            </Link>
            .
          </Empty>
        ) : (
          <table className={tableClass}>
            <caption className="sr-only">Alert policies, newest first</caption>
            <thead>
              <tr>
                {['Name', 'Scope', 'Matches', 'Destinations', 'Status', 'Updated', 'Actions'].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((p) => (
                <tr key={p.slug} data-policy={p.slug}>
                  <td className={tdClass}>
                    <Link
                      to="/o/$org/alerts/policies/$slug"
                      params={{ org, slug: p.slug }}
                      className={linkClass}
                    >
                      {p.name}
                    </Link>
                    <div className="font-mono text-xs text-slate-600 dark:text-slate-400">{p.slug}</div>
                  </td>
                  <td className={`${tdClass} text-xs`}>{where(p)}</td>
                  <td className={`${tdClass} text-xs`}>
                    {filters(p).length === 0
                      ? 'every notification'
                      : filters(p).map(([k, v]) => (
                          <div key={k}>
                            {k}: <code>{v}</code>
                          </div>
                        ))}
                  </td>
                  <td className={`${tdClass} text-xs`}>
                    {p.destination_slugs.map((d, i) => (
                      <span key={d}>
                        {i > 0 && ', '}
                        <Link
                          to="/o/$org/alerts/destinations/$slug"
                          params={{ org, slug: d }}
                          className={linkClass}
                        >
                          {d}
                        </Link>
                      </span>
                    ))}
                  </td>
                  <td className={tdClass}>
                    <Badge tone={p.enabled ? 'green' : 'slate'}>{p.enabled ? 'enabled' : 'disabled'}</Badge>
                  </td>
                  <td className={`${tdClass} whitespace-nowrap text-xs`}>{formatTime(p.updated_at)}</td>
                  <td className={tdClass}>
                    <ConfirmButton
                      label="Delete"
                      ariaLabel={`Delete ${p.name}`}
                      title={`Delete the policy ${p.name}?`}
                      confirmLabel="Delete policy"
                      onConfirm={() => remove.mutate(p.slug)}
                    >
                      Notifications it matches are no longer sent to its destinations. Past delivery attempts
                      stay.
                    </ConfirmButton>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <CursorPager
          page={list.data}
          cursor={search.cursor}
          go={(to) => page(to.cursor ?? null, to.direction)}
        />
      </Card>
    </div>
  );
}

export function PolicyNew() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const navigate = useNavigate();
  return (
    <div className="max-w-4xl">
      <AlertsNav org={org} />
      <PageHeader title="New alert policy" />
      <PolicyForm
        org={org}
        onSaved={() => navigate({ to: '/o/$org/alerts/policies', params: { org }, search: {} })}
      />
    </div>
  );
}

export function PolicyDetail() {
  const { org, slug } = useParams({ from: '/authed/o/$org/alerts/policies/$slug' });
  const navigate = useNavigate();
  const back = () => navigate({ to: '/o/$org/alerts/policies', params: { org }, search: {} });
  const one = useQuery(policyQuery(org, slug));
  return (
    <div className="max-w-4xl">
      <AlertsNav org={org} />
      <ErrorNote error={one.error} />
      {one.data && (
        <>
          <PageHeader title={one.data.name} subtitle={<code>{one.data.slug}</code>} />
          <PolicyForm key={one.data.updated_at} org={org} existing={one.data} onSaved={back} />
        </>
      )}
      <p className="mt-3">
        <Button onClick={back}>Back to policies</Button>
      </p>
    </div>
  );
}
