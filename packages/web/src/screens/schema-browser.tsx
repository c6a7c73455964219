import { useMemo } from 'react';
import { Input } from '../components/ui';

type Table = { schema?: string; name: string; columns?: { name: string; type?: string }[] };

/** Tables and columns of the cached schema, filtered by a search that matches either. */
export function SchemaBrowser(props: {
  schema: Record<string, unknown>;
  q?: string;
  onSearch: (q: string | undefined) => void;
}) {
  const tables = (Array.isArray(props.schema.tables) ? props.schema.tables : []) as Table[];
  const needle = props.q?.toLowerCase() ?? '';
  const shown = useMemo(
    () =>
      tables
        .map((t) => {
          const full = `${t.schema ? `${t.schema}.` : ''}${t.name}`;
          if (!needle || full.toLowerCase().includes(needle)) return { full, t, columns: t.columns ?? [] };
          const columns = (t.columns ?? []).filter((c) => c.name.toLowerCase().includes(needle));
          return columns.length ? { full, t, columns } : null;
        })
        .filter((x) => x !== null),
    [tables, needle],
  );
  if (tables.length === 0)
    return <p className="text-sm text-slate-600 dark:text-slate-400">No schema imported yet.</p>;
  return (
    <div>
      <div className="mb-3 max-w-sm">
        <label
          htmlFor="schema-search"
          className="block text-xs font-medium text-slate-600 dark:text-slate-400"
        >
          Search tables and columns
        </label>
        <Input
          id="schema-search"
          type="search"
          defaultValue={props.q ?? ''}
          onChange={(e) => props.onSearch(e.target.value || undefined)}
        />
      </div>
      <p className="mb-2 text-xs text-slate-600 dark:text-slate-400">
        {shown.length} of {tables.length} tables
      </p>
      <ul className="max-h-[32rem] space-y-1 overflow-auto">
        {shown.slice(0, 300).map(({ full, columns }) => (
          <li key={full}>
            <details>
              <summary className="cursor-pointer font-mono text-sm">
                {full}{' '}
                <span className="text-xs text-slate-500 dark:text-slate-400">({columns.length} columns)</span>
              </summary>
              <ul className="ml-6 mt-1 grid grid-cols-2 gap-x-4 text-xs">
                {columns.map((c) => (
                  <li key={c.name} className="font-mono">
                    {c.name} <span className="text-slate-500 dark:text-slate-400">{c.type}</span>
                  </li>
                ))}
              </ul>
            </details>
          </li>
        ))}
      </ul>
    </div>
  );
}
