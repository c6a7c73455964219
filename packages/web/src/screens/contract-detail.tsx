import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { lazy, Suspense, useState } from 'react';
import {
  Badge,
  Button,
  Card,
  Empty,
  ErrorNote,
  Field,
  PageHeader,
  Select,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';
import type { BodyOf } from '../lib/api';

import { formatTime } from '../lib/format';
import {
  contractKeys,
  contractQuery,
  createRevision,
  fetchOdcs,
  revisionsQuery,
} from '../lib/queries/contracts';
import { linkClass, type Revision } from './contract-types';

const CodeEditor = lazy(() => import('../components/code-editor').then((m) => ({ default: m.CodeEditor })));

const starter = (r?: Revision) =>
  JSON.stringify(
    r
      ? { columns: r.columns, quality: r.quality, freshness: r.freshness }
      : {
          columns: [{ name: 'id', type: 'integer', nullable: false, unique: true, primary_key: true }],
          quality: [{ metric: 'row_count', must_be_greater_than: 0 }],
          freshness: null,
        },
    null,
    2,
  );

function download(name: string, doc: unknown) {
  const url = URL.createObjectURL(new Blob([JSON.stringify(doc, null, 2)], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  URL.revokeObjectURL(url);
}

/** A contract with its immutable revisions, one shown, and the editor of the next revision. */
export function ContractDetail() {
  const { org, project, contract } = useParams({ from: '/authed/o/$org/contracts/$project/$contract' });
  const search = useSearch({ from: '/authed/o/$org/contracts/$project/$contract' }) as { revision?: string };
  const navigate = useNavigate();
  const qc = useQueryClient();
  const at = { organization: org, project, contract_slug: contract };
  const one = useQuery(contractQuery(at));
  const revisions = useQuery(revisionsQuery(at));
  const list = revisions.data?.revisions ?? [];
  const shown = list.find((r) => r.slug === search.revision) ?? list[0];
  const [draft, setDraft] = useState<string | null>(null);
  const [compatibility, setCompatibility] = useState<'backward' | 'none'>('backward');
  const [odcsError, setOdcsError] = useState<unknown>(null);
  const text = draft ?? starter(list[0]);
  const revise = useMutation({
    mutationFn: async () => {
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new Error('The revision is not valid JSON');
      }
      return createRevision(at, { ...parsed, compatibility } as BodyOf<'createProjectsContractsRevisions'>);
    },
    onSuccess: async (r) => {
      setDraft(null);
      await qc.invalidateQueries({ queryKey: contractKeys.one(at) });
      await navigate({
        to: '/o/$org/contracts/$project/$contract',
        params: { org, project, contract },
        search: { revision: r.slug },
      });
    },
  });
  const c = one.data;
  return (
    <div className="space-y-4">
      <p className="text-sm">
        <Link to="/o/$org/contracts" params={{ org }} search={{ project }} className={linkClass}>
          ← Contracts of {project}
        </Link>
      </p>
      <ErrorNote error={one.error ?? revisions.error} />
      {c && (
        <PageHeader
          title={c.name}
          subtitle={
            <>
              <code>{c.slug}</code> on sink <code>{c.target.pipeline_slug}</code> /{' '}
              <code>{c.target.step_slug}</code>
              {c.description ? ` · ${c.description}` : ''}
            </>
          }
        />
      )}
      <div className="grid gap-4 xl:grid-cols-[1fr_3fr]">
        <Card title="Revisions">
          {list.length === 0 ? (
            <Empty>No revision yet.</Empty>
          ) : (
            <ol className="space-y-1 text-sm" aria-label="Revisions, newest first">
              {list.map((r) => (
                <li key={r.slug} className="flex justify-between gap-2">
                  <Link
                    to="/o/$org/contracts/$project/$contract"
                    params={{ org, project, contract }}
                    search={{ revision: r.slug }}
                    aria-current={r.slug === shown?.slug ? 'true' : undefined}
                    className={`font-mono ${linkClass} ${r.slug === shown?.slug ? 'font-bold' : ''}`}
                  >
                    {r.slug}
                  </Link>
                  <span className="text-xs text-slate-600 dark:text-slate-400">
                    {formatTime(r.created_at)}
                  </span>
                </li>
              ))}
            </ol>
          )}
        </Card>
        {shown && (
          <Card
            title={`Revision ${shown.slug}`}
            actions={
              <Button
                onClick={async () => {
                  setOdcsError(null);
                  try {
                    download(`${contract}-${shown.slug}.odcs.json`, await fetchOdcs(at, shown.slug));
                  } catch (e) {
                    setOdcsError(e);
                  }
                }}
              >
                Download ODCS
              </Button>
            }
          >
            <ErrorNote error={odcsError} />
            <p className="mb-2 text-xs text-slate-600 dark:text-slate-400">
              based on {shown.based_on ?? 'nothing'} · compatibility {shown.compatibility} ·{' '}
              <code className="break-all">{shown.digest}</code>
            </p>
            <table className={tableClass} data-testid="revision-columns">
              <caption className="sr-only">Promised columns</caption>
              <thead>
                <tr>
                  {['Column', 'Type', 'Nullable', 'Unique', 'Primary key'].map((h) => (
                    <th key={h} scope="col" className={thClass}>
                      {h}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {shown.columns.map((col) => (
                  <tr key={col.name}>
                    <td className={`${tdClass} font-mono text-xs`}>{col.name}</td>
                    <td className={`${tdClass} font-mono text-xs`}>{col.type}</td>
                    <td className={tdClass}>{col.nullable ? 'yes' : 'no'}</td>
                    <td className={tdClass}>{col.unique ? 'yes' : ''}</td>
                    <td className={tdClass}>{col.primary_key ? 'yes' : ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <h3 className="mt-3 text-sm font-semibold">Quality rules</h3>
            <ul className="list-disc pl-5 text-sm">
              {shown.quality.length === 0 && <li>none</li>}
              {shown.quality.map((q) => (
                <li key={JSON.stringify(q)} className="font-mono text-xs">
                  {JSON.stringify(q)}
                </li>
              ))}
            </ul>
            <p className="mt-2 text-sm">
              Freshness:{' '}
              {shown.freshness
                ? `${shown.freshness.column} at most ${shown.freshness.max_latency_seconds} s old`
                : 'none'}
            </p>
          </Card>
        )}
      </div>
      <Card title="New revision">
        <p className="mb-2 text-sm text-slate-700 dark:text-slate-300">
          Columns, quality rules and freshness as JSON, starting from the latest revision. A backward revision
          that breaks the latest one is refused, naming each breaking change.
        </p>
        <Suspense fallback={<div className="h-64" />}>
          <CodeEditor value={text} onChange={setDraft} language="json" label="Revision" minHeight="10rem" />
        </Suspense>
        <div className="mt-3 flex flex-wrap items-end gap-3">
          <div className="w-full max-w-96">
            <Field label="Compatibility">
              {({ id }) => (
                <Select
                  id={id}
                  value={compatibility}
                  onChange={(e) => setCompatibility(e.target.value as 'backward' | 'none')}
                >
                  <option value="backward">backward: refuse breaking changes</option>
                  <option value="none">none: accept a breaking change on purpose</option>
                </Select>
              )}
            </Field>
          </div>
          <Button variant="primary" onClick={() => revise.mutate()} disabled={revise.isPending}>
            Create revision
          </Button>
        </div>
        <div className="mt-3">
          <ErrorNote error={revise.error} />
          {revise.data && (
            <p role="status" className="text-sm">
              <Badge tone="green">created</Badge> revision {revise.data.slug}
            </p>
          )}
        </div>
      </Card>
    </div>
  );
}
