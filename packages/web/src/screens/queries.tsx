import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { useVirtualizer } from '@tanstack/react-virtual';
import { lazy, Suspense, useEffect, useRef, useState } from 'react';
import { Button, Card, ErrorNote, Field, Input, PageHeader, Select, StateBadge } from '../components/ui';
import { scrollRegion } from '../lib/a11y';

import { formatTime } from '../lib/format';
import { dataSourcePickerQuery } from '../lib/queries/data-sources';
import {
  type Execution,
  executeQuery,
  executionsQuery,
  savedQueriesQuery,
  savedQueryKeys,
  saveQuery,
} from '../lib/queries/saved-queries';

const CodeEditor = lazy(() => import('../components/code-editor').then((m) => ({ default: m.CodeEditor })));

function ResultGrid({ execution }: { execution: Execution }) {
  // An `sql` result (the OpenAPI operation getQueryExecutions): {columns: [{name, type}], rows: [[…]]}; the API serves it open.
  const result = execution.result as {
    columns?: { name: string; type?: string }[];
    rows?: unknown[][];
  } | null;
  const cols = result?.columns ?? [];
  const rows = result?.rows ?? [];
  const scroller = useRef<HTMLDivElement>(null);
  const v = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 28,
    overscan: 15,
  });
  const items = v.getVirtualItems();
  const padTop = items[0]?.start ?? 0;
  const padBottom = items.length ? v.getTotalSize() - items[items.length - 1].end : 0;
  return (
    <div>
      <p className="mb-1 text-xs text-slate-600 dark:text-slate-400">
        {execution.row_count ?? 0} rows{execution.truncated ? ' (truncated)' : ''} ·{' '}
        {execution.duration_ms ?? '?'} ms
      </p>
      <div
        ref={scroller}
        {...scrollRegion}
        className="max-h-96 overflow-auto rounded-md border border-slate-200 dark:border-slate-800"
      >
        <table className="w-full text-left font-mono text-xs">
          <caption className="sr-only">Query result</caption>
          <thead className="sticky top-0 bg-slate-100 dark:bg-slate-800">
            <tr>
              {cols.map((c) => (
                <th key={c.name} scope="col" className="px-2 py-1 font-semibold">
                  {c.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {padTop > 0 && (
              <tr aria-hidden>
                <td colSpan={cols.length} style={{ height: padTop }} />
              </tr>
            )}
            {items.map((item) => (
              <tr
                key={item.index}
                className="border-b border-slate-100 dark:border-slate-800"
                style={{ height: 28 }}
              >
                {(rows[item.index] ?? []).map((cell, i) => (
                  <td key={cols[i]?.name ?? i} className="max-w-xs truncate px-2">
                    {cell === null ? 'null' : typeof cell === 'object' ? JSON.stringify(cell) : String(cell)}
                  </td>
                ))}
              </tr>
            ))}
            {padBottom > 0 && (
              <tr aria-hidden>
                <td colSpan={cols.length} style={{ height: padBottom }} />
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </div>
  );
}

export function Queries() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const search = useSearch({ from: '/authed/o/$org/queries' });
  const navigate = useNavigate({ from: '/o/$org/queries' });
  const qc = useQueryClient();
  const queries = useQuery(savedQueriesQuery(org));
  const sources = useQuery(dataSourcePickerQuery(org));
  const current = queries.data?.queries.find((q) => q.slug === search.query);
  const [name, setName] = useState('');
  const [ds, setDs] = useState('');
  const [text, setText] = useState('select 1');
  useEffect(() => {
    if (current) {
      setName(current.name);
      setDs(current.data_source_slug);
      setText(String(current.statement.sql ?? JSON.stringify(current.statement, null, 2)));
    }
  }, [current]);
  const history = useQuery(executionsQuery(org, search.query));
  const shown =
    history.data?.query_executions.find((e) => e.slug === search.execution) ??
    history.data?.query_executions[0];
  const save = useMutation({
    mutationFn: async () => {
      const body = {
        name: name || 'Untitled query',
        data_source_slug: ds || (sources.data?.data_sources[0]?.slug ?? ''),
        statement: { type: 'sql', sql: text },
      };
      const q = await saveQuery(org, current?.slug ?? null, body);
      const ex = await executeQuery(org, q.slug);
      return { q, ex };
    },
    onSuccess: async ({ q, ex }) => {
      await qc.invalidateQueries({ queryKey: savedQueryKeys.all(org) });
      await navigate({ search: { query: q.slug, execution: ex.slug } });
    },
  });
  return (
    <div className="grid gap-4 xl:grid-cols-[16rem_1fr]">
      <Card title="Saved queries" className="self-start">
        <ul className="space-y-1 text-sm">
          <li>
            <Button variant="ghost" className="w-full justify-start" onClick={() => navigate({ search: {} })}>
              + New query
            </Button>
          </li>
          {queries.data?.queries.map((q) => (
            <li key={q.slug}>
              <Button
                variant="ghost"
                className={`w-full justify-start ${q.slug === search.query ? 'font-semibold' : ''}`}
                onClick={() => navigate({ search: { query: q.slug } })}
              >
                {q.name}
              </Button>
            </li>
          ))}
        </ul>
      </Card>
      <div className="space-y-4">
        <PageHeader title={current?.name ?? 'New query'} />
        <div className="grid gap-3 sm:grid-cols-2">
          <Field label="Name">
            {({ id }) => <Input id={id} value={name} onChange={(e) => setName(e.target.value)} />}
          </Field>
          <Field label="Data source">
            {({ id }) => (
              <Select id={id} value={ds} onChange={(e) => setDs(e.target.value)}>
                {sources.data?.data_sources.map((d) => (
                  <option key={d.slug} value={d.slug}>
                    {d.name} ({d.type})
                  </option>
                ))}
              </Select>
            )}
          </Field>
        </div>
        <Suspense fallback={<div className="h-48" />}>
          <CodeEditor value={text} onChange={setText} language="sql" label="SQL statement" />
        </Suspense>
        <ErrorNote error={save.error} />
        <Button variant="primary" onClick={() => save.mutate()} disabled={save.isPending}>
          {save.isPending ? 'Running…' : 'Save and run'}
        </Button>
        {shown && (
          <Card
            title={`Result · ${formatTime(shown.executed_at)}`}
            actions={<StateBadge state={shown.status} />}
          >
            {shown.error ? (
              <ErrorNote error={new Error(`${shown.error.code}: ${shown.error.message}`)} />
            ) : (
              <ResultGrid execution={shown} />
            )}
          </Card>
        )}
        {history.data && history.data.query_executions.length > 0 && (
          <Card title="History">
            <ul className="space-y-1 text-sm">
              {history.data.query_executions.map((e) => (
                <li key={e.slug} className="flex items-center gap-2">
                  <StateBadge state={e.status} />
                  <button
                    type="button"
                    className="text-blue-700 hover:underline dark:text-blue-300"
                    onClick={() => navigate({ search: { query: search.query, execution: e.slug } })}
                  >
                    {formatTime(e.executed_at)}
                  </button>
                  <span className="text-xs text-slate-600 dark:text-slate-400">{e.row_count ?? 0} rows</span>
                </li>
              ))}
            </ul>
          </Card>
        )}
      </div>
    </div>
  );
}
