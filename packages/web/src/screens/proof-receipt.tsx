import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { useEffect } from 'react';
import { Badge, Card, Empty, ErrorNote, PageHeader, tableClass, tdClass, thClass } from '../components/ui';

import { formatTime } from '../lib/format';
import { observationsOfQuery, receiptQuery } from '../lib/queries/proof';
import { linkClass, short, tone } from './proof-types';

/** A signed receipt: the page a published commit check links to. */
export function ProofReceiptPage() {
  const { org, ds, receipt } = useParams({ from: '/authed/o/$org/data-sources/$ds/proof-receipts/$receipt' });
  const at = { organization: org, data_source: ds };
  const r = useQuery(receiptQuery(at, receipt));
  const observations = useQuery(observationsOfQuery(at, r.data?.observation_slugs));
  const d = r.data;
  const receiptUrl = d
    ? URL.createObjectURL(new Blob([JSON.stringify(d, null, 2)], { type: 'application/json' }))
    : undefined;
  useEffect(() => () => (receiptUrl ? URL.revokeObjectURL(receiptUrl) : undefined), [receiptUrl]);
  return (
    <div className="space-y-4">
      <p className="text-sm">
        <Link
          to="/o/$org/data-sources/$ds"
          params={{ org, ds }}
          search={{ tab: 'proof' }}
          className={linkClass}
        >
          ← Proof of {ds}
        </Link>
      </p>
      <ErrorNote error={r.error ?? observations.error} />
      {d && (
        <>
          <PageHeader
            title={`Proof receipt ${d.slug}`}
            subtitle={`Receipt ${d.sequence} of ${ds}, for candidate ${d.candidate_slug}`}
            actions={
              <span className="flex items-center gap-2">
                <span data-testid="receipt-verdict">
                  <Badge tone={tone(d.verdict)}>{d.verdict}</Badge>
                </span>
                <a
                  href={receiptUrl}
                  download={`${d.slug}.json`}
                  className="rounded-md border border-slate-300 px-3 py-1.5 text-sm dark:border-slate-600"
                >
                  Download receipt
                </a>
              </span>
            }
          />
          <Card title="Signature and chain">
            <dl className="grid grid-cols-[max-content_1fr] gap-x-6 gap-y-1 text-sm">
              <dt className="font-medium text-slate-600 dark:text-slate-400">Digest</dt>
              <dd className="break-all font-mono text-xs">{d.digest}</dd>
              <dt className="font-medium text-slate-600 dark:text-slate-400">Previous receipt</dt>
              <dd className="break-all font-mono text-xs">
                {d.prev_receipt_digest ?? 'none: first of the chain'}
              </dd>
              <dt className="font-medium text-slate-600 dark:text-slate-400">Signed by</dt>
              <dd className="break-all font-mono text-xs">
                {d.envelope.signatures.map((s) => s.keyid).join(', ')}
              </dd>
              <dt className="font-medium text-slate-600 dark:text-slate-400">Compiled</dt>
              <dd>{formatTime(d.compiled_at)}</dd>
              <dt className="font-medium text-slate-600 dark:text-slate-400">Commit check</dt>
              <dd>
                {d.check
                  ? `${d.check.name}: ${d.check.conclusion}${d.check.published ? ', published' : `, not published (${d.check.error})`}`
                  : 'not published'}
              </dd>
            </dl>
            <p className="mt-2 text-xs text-slate-600 dark:text-slate-400">
              Verify offline: <code>sluice proof verify {d.slug}.json --keys keys.json</code>
            </p>
          </Card>
          {observations.data?.map((o, i) => (
            <Card
              key={o.slug}
              title={`${d.observation_slugs.length === 2 && i === 0 ? 'Base' : 'Head'} observation ${o.slug} at ${short(o.commit_sha)}`}
              actions={<Badge tone={tone(o.state)}>{o.state}</Badge>}
            >
              {o.error && <ErrorNote error={new Error(`${o.error.code}: ${o.error.message}`)} />}
              <table className={tableClass}>
                <caption className="sr-only">Targets checked</caption>
                <thead>
                  <tr>
                    {['Target', 'Result', 'Files', 'Findings'].map((h) => (
                      <th key={h} scope="col" className={thClass}>
                        {h}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {o.targets.map((t) => (
                    <tr key={`${t.kind}:${t.ref}`}>
                      <td className={`${tdClass} font-mono text-xs`}>
                        {t.kind} {t.ref}
                      </td>
                      <td className={tdClass}>
                        <Badge tone={tone(t.result)}>{t.result}</Badge>
                      </td>
                      <td className={`${tdClass} font-mono text-xs`}>{t.files.join(', ') || '—'}</td>
                      <td className={`${tdClass} text-xs`}>
                        {t.findings.map((f) => `${f.code}: ${f.message}`).join('; ') || '—'}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <h3 className="mt-3 text-sm font-semibold">Input files</h3>
              <ul className="text-xs">
                {o.inputs.map((f) => (
                  <li key={f.path} className="font-mono">
                    {f.path}{' '}
                    <span className="text-slate-600 dark:text-slate-400">
                      sha256 {f.sha256.slice(0, 16)}…
                    </span>
                  </li>
                ))}
              </ul>
            </Card>
          ))}
        </>
      )}
      {!d && !r.error && <Empty>Loading…</Empty>}
    </div>
  );
}
