import { useQuery } from '@tanstack/react-query';
import { Link, useParams, useSearch } from '@tanstack/react-router';
import {
  AlertListPage,
  DeleteButton,
  linkClass,
  NameCell,
  StatusCells,
  useRemove,
  useToList,
} from '../components/alert-list';
import { AlertsNav } from '../components/alerts-nav';
import { PolicyForm } from '../components/policy-form';
import { Button, ErrorNote, PageHeader, tdClass } from '../components/ui';
import type { Policy } from '../lib/alerts';
import { alertKeys, deletePolicy, policiesQuery, policyQuery } from '../lib/queries/alerts';

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
  const list = useQuery(policiesQuery(org, search));
  const remove = useRemove((slug) => deletePolicy(org, slug), alertKeys.policies(org));
  return (
    <AlertListPage
      org={org}
      list="/o/$org/alerts/policies"
      title="Alert policies"
      subtitle="A notification is sent to the destinations of every enabled policy it matches, once per destination."
      newLabel="New policy"
      error={list.error ?? remove.error}
      emptyBefore="No policy yet, so no alert is mailed."
      emptyAfter="."
      caption="Alert policies, newest first"
      headers={['Name', 'Scope', 'Matches', 'Destinations', 'Status', 'Updated', 'Actions']}
      page={list.data}
      rows={list.data?.alert_policies ?? []}
      cursor={search.cursor}
      row={(p) => (
        <tr key={p.slug} data-policy={p.slug}>
          <NameCell org={org} to="/o/$org/alerts/policies/$slug" slug={p.slug} name={p.name} />
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
                <Link to="/o/$org/alerts/destinations/$slug" params={{ org, slug: d }} className={linkClass}>
                  {d}
                </Link>
              </span>
            ))}
          </td>
          <StatusCells enabled={p.enabled} updatedAt={p.updated_at} />
          <td className={tdClass}>
            <DeleteButton noun="policy" name={p.name} onConfirm={() => remove.mutate(p.slug)}>
              Notifications it matches are no longer sent to its destinations. Past delivery attempts stay.
            </DeleteButton>
          </td>
        </tr>
      )}
    />
  );
}

export function PolicyNew() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const back = useToList(org, '/o/$org/alerts/policies');
  return (
    <div className="max-w-4xl">
      <AlertsNav org={org} />
      <PageHeader title="New alert policy" />
      <PolicyForm org={org} onSaved={back} />
    </div>
  );
}

export function PolicyDetail() {
  const { org, slug } = useParams({ from: '/authed/o/$org/alerts/policies/$slug' });
  const back = useToList(org, '/o/$org/alerts/policies');
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
