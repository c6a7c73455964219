import type { DuckDBConnection } from '@duckdb/node-api';

// Whether a query reads its one streamed JSON input (duck-stream.ts) exactly once and to its
// end, from DuckDB's own physical plan: one READ_JSON scan and no LIMIT. Anything else, or a
// query that does not explain (template parameters, not a query), reads a table instead.

type PlanNode = { name?: string; children?: PlanNode[] };

export async function readsOnce(conn: DuckDBConnection, sql: string): Promise<boolean> {
  let plan: PlanNode[];
  try {
    const r = await conn.runAndReadAll(`EXPLAIN (FORMAT json) ${sql.replace(/;\s*$/, '')}`);
    plan = JSON.parse(String(r.getRows()[0]?.[1]));
  } catch {
    return false;
  }
  const names: string[] = [];
  const walk = (n: PlanNode) => {
    names.push(String(n.name ?? ''));
    for (const c of n.children ?? []) walk(c);
  };
  for (const n of Array.isArray(plan) ? plan : [plan]) walk(n);
  return names.filter((n) => n === 'READ_JSON').length === 1 && !names.some((n) => n.includes('LIMIT'));
}
