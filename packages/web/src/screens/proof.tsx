import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import {
  Badge,
  Button,
  Card,
  Empty,
  ErrorNote,
  Field,
  Input,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';

import { formatTime } from '../lib/format';
import {
  compileReceipt,
  observationsQuery,
  observeCommit,
  proofKeys,
  receiptsQuery,
} from '../lib/queries/proof';
import { SettingsCard } from './proof-settings';
import { linkClass, short, tone } from './proof-types';

/** The proof tab of a git data source: settings, observations and receipts. */
export function ProofPanel(props: { org: string; ds: string }) {
  const at = { organization: props.org, data_source: props.ds };
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [ref, setRef] = useState('');
  const [picked, setPicked] = useState<string[]>([]);
  const observations = useQuery({
    ...observationsQuery(at),
    refetchInterval: (q) => (q.state.data?.observations.some((o) => o.state === 'running') ? 1000 : false),
  });
  const receipts = useQuery(receiptsQuery(at));
  const observe = useMutation({
    mutationFn: () =>
      observeCommit(at, /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(ref) ? { commit_sha: ref } : ref ? { ref } : {}),
    onSuccess: () => qc.invalidateQueries({ queryKey: proofKeys.observations(at) }),
  });
  const obs = observations.data?.observations ?? [];
  const head = obs.find((o) => o.slug === picked[picked.length - 1]);
  const compile = useMutation({
    mutationFn: () =>
      compileReceipt(at, {
        candidate_slug: head?.candidate_slug ?? '',
        observation_slugs: picked,
      }),
    onSuccess: (r) =>
      navigate({
        to: '/o/$org/data-sources/$ds/proof-receipts/$receipt',
        params: { org: props.org, ds: props.ds, receipt: r.slug },
      }),
  });
  return (
    <div className="space-y-4">
      <SettingsCard at={at} />
      <Card title="Observations">
        <div className="mb-3 flex flex-wrap items-end gap-2">
          <div className="w-full max-w-96">
            <Field label="Commit SHA or branch" hint="Empty: the default branch.">
              {({ id, describedBy }) => (
                <Input
                  id={id}
                  aria-describedby={describedBy}
                  value={ref}
                  onChange={(e) => setRef(e.target.value.trim())}
                />
              )}
            </Field>
          </div>
          <Button onClick={() => observe.mutate()} disabled={observe.isPending}>
            Observe
          </Button>
        </div>
        <ErrorNote error={observe.error ?? observations.error} />
        {obs.length === 0 ? (
          <Empty>No observation yet.</Empty>
        ) : (
          <table className={tableClass}>
            <caption className="sr-only">
              Observations, newest first; pick one, or base then head, to compile a receipt
            </caption>
            <thead>
              <tr>
                {['Pick', 'Observation', 'State', 'Commit', 'Targets', 'Observed'].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {obs.map((o) => (
                <tr key={o.slug} data-observation={o.slug}>
                  <td className={tdClass}>
                    <input
                      type="checkbox"
                      aria-label={`Pick observation ${o.slug}`}
                      checked={picked.includes(o.slug)}
                      disabled={o.state === 'running'}
                      onChange={(e) =>
                        setPicked(
                          e.target.checked
                            ? [...picked, o.slug].slice(-2)
                            : picked.filter((p) => p !== o.slug),
                        )
                      }
                    />
                  </td>
                  <td className={`${tdClass} font-mono text-xs`}>{o.slug}</td>
                  <td className={tdClass}>
                    <Badge tone={tone(o.state)}>{o.state}</Badge>
                  </td>
                  <td className={`${tdClass} font-mono text-xs`}>{short(o.commit_sha)}</td>
                  <td className={`${tdClass} text-xs`}>
                    {o.error
                      ? `${o.error.code}: ${o.error.message}`
                      : o.targets.map((t) => `${t.kind} ${t.ref}: ${t.result}`).join('; ')}
                  </td>
                  <td className={`${tdClass} text-xs`}>{formatTime(o.observed_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <div className="mt-3 flex items-center gap-2">
          <Button variant="primary" onClick={() => compile.mutate()} disabled={!head || compile.isPending}>
            Compile receipt
          </Button>
          <span className="text-xs text-slate-600 dark:text-slate-400">
            {picked.length === 2
              ? `base ${picked[0]}, head ${picked[1]}`
              : picked.length === 1
                ? `head ${picked[0]}`
                : 'pick one or two'}
          </span>
        </div>
        <div className="mt-2">
          <ErrorNote error={compile.error} />
        </div>
      </Card>
      <Card title="Receipts">
        <ErrorNote error={receipts.error} />
        {receipts.data?.receipts.length === 0 ? (
          <Empty>No receipt yet.</Empty>
        ) : (
          <table className={tableClass}>
            <caption className="sr-only">Receipts, newest first</caption>
            <thead>
              <tr>
                {['Receipt', 'Sequence', 'Verdict', 'Candidate', 'Compiled'].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {receipts.data?.receipts.map((r) => (
                <tr key={r.slug} data-receipt={r.slug}>
                  <td className={`${tdClass} font-mono text-xs`}>
                    <Link
                      to="/o/$org/data-sources/$ds/proof-receipts/$receipt"
                      params={{ org: props.org, ds: props.ds, receipt: r.slug }}
                      className={linkClass}
                    >
                      {r.slug}
                    </Link>
                  </td>
                  <td className={tdClass}>{r.sequence}</td>
                  <td className={tdClass}>
                    <Badge tone={tone(r.verdict)}>{r.verdict}</Badge>
                  </td>
                  <td className={`${tdClass} font-mono text-xs`}>{r.candidate_slug}</td>
                  <td className={`${tdClass} text-xs`}>{formatTime(r.compiled_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
    </div>
  );
}
