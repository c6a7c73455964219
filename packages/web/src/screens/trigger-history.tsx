import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import {
  Badge,
  Card,
  CursorPager,
  Empty,
  ErrorNote,
  Select,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';

import { formatTime } from '../lib/format';
import { deliveriesQuery, occurrencesQuery, type TriggerPath } from '../lib/queries/triggers';

// What a trigger did: a schedule's occurrence ledger, a webhook's accepted deliveries.

const OUTCOMES = ['started', 'buffered', 'skipped_overlap', 'skipped_catch_up', 'skipped_paused', 'failed'];
export type Search = { env?: string; outcome?: string; cursor?: string; direction?: string };

type ListProps = {
  at: TriggerPath;
  search: Search;
  onSearch: (p: Partial<Search>) => void;
  org: string;
  project: string;
  env: string;
};

const RunLink = (p: { org: string; project: string; env: string; run: string | null }) =>
  p.run ? (
    <Link
      to="/o/$org/runs/$project/$env/$run"
      params={{ org: p.org, project: p.project, env: p.env, run: p.run }}
      className="font-mono text-xs text-blue-700 hover:underline dark:text-blue-300"
    >
      {p.run}
    </Link>
  ) : (
    <span>—</span>
  );

export function Ledger(props: ListProps) {
  const { search } = props;
  const list = useQuery(
    occurrencesQuery(props.at, {
      outcome: search.outcome,
      cursor: search.cursor,
      direction: search.direction,
    }),
  );
  return (
    <Card
      title="Occurrence ledger"
      actions={
        <div className="flex items-center gap-2">
          <label htmlFor="ledger-outcome" className="text-xs font-medium">
            Outcome
          </label>
          <Select
            id="ledger-outcome"
            value={search.outcome ?? ''}
            onChange={(e) => props.onSearch({ outcome: e.target.value || undefined })}
          >
            <option value="">Any</option>
            {OUTCOMES.map((o) => (
              <option key={o}>{o}</option>
            ))}
          </Select>
        </div>
      }
    >
      <ErrorNote error={list.error} />
      {list.data?.occurrences.length === 0 ? (
        <Empty>No occurrence decided yet.</Empty>
      ) : (
        <table className={tableClass}>
          <caption className="sr-only">Every decided occurrence, newest first</caption>
          <thead>
            <tr>
              {['Nominal', 'Fired', 'Outcome', 'Reason', 'Run'].map((h) => (
                <th key={h} scope="col" className={thClass}>
                  {h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {list.data?.occurrences.map((o) => (
              <tr key={o.nominal_at}>
                <td className={`${tdClass} text-xs`}>{formatTime(o.nominal_at)}</td>
                <td className={`${tdClass} text-xs`}>{formatTime(o.fire_at)}</td>
                <td className={tdClass}>
                  <Badge tone={o.outcome === 'started' ? 'green' : o.outcome === 'failed' ? 'red' : 'amber'}>
                    {o.outcome}
                  </Badge>
                </td>
                <td className={`${tdClass} text-xs`}>{o.reason ?? ''}</td>
                <td className={tdClass}>
                  <RunLink org={props.org} project={props.project} env={props.env} run={o.run_slug} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <CursorPager page={list.data} cursor={search.cursor} go={props.onSearch} />
    </Card>
  );
}

export function Deliveries(props: ListProps) {
  const { search } = props;
  const list = useQuery(deliveriesQuery(props.at, { cursor: search.cursor, direction: search.direction }));
  return (
    <Card title="Accepted deliveries (refusals are in the security audit)">
      <ErrorNote error={list.error} />
      {list.data?.deliveries.length === 0 ? (
        <Empty>No delivery accepted yet.</Empty>
      ) : (
        <table className={tableClass}>
          <caption className="sr-only">Accepted deliveries, newest first</caption>
          <thead>
            <tr>
              {['Delivery id', 'Received', 'Input keys', 'Body SHA-256', 'Run'].map((h) => (
                <th key={h} scope="col" className={thClass}>
                  {h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {list.data?.deliveries.map((d) => (
              <tr key={d.delivery_id}>
                <td className={`${tdClass} font-mono text-xs`}>{d.delivery_id}</td>
                <td className={`${tdClass} text-xs`}>{formatTime(d.received_at)}</td>
                <td className={`${tdClass} text-xs`}>{d.input_keys.join(', ') || '—'}</td>
                <td className={`${tdClass} font-mono text-xs`}>{d.body_sha256.slice(0, 16)}…</td>
                <td className={tdClass}>
                  <RunLink org={props.org} project={props.project} env={props.env} run={d.run_slug} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <CursorPager page={list.data} cursor={search.cursor} go={props.onSearch} />
    </Card>
  );
}
