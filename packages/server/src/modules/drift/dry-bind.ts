import { duckType } from '@sluice/engine';
import { DuckHostError, duckHost } from '../../duck-host/client';
import { withoutTemplates } from '../pipelines/index';

// Dry-binding over empty DuckDB tables (the engine runs transforms in DuckDB): `DESCRIBE` of a
// query names its output columns and types, and a query that no longer binds fails with the
// binder's own message. Column references come from DuckDB's parser (json_serialize_sql), never
// from regexes. Each binder is a private in-memory database with no external access, in the
// server's DuckDB process (duck-host/client.ts).

export type Col = { name: string; type: string };
export type BindResult = { ok: true; columns: Col[] } | { ok: false; message: string };
export type SqlRefs = { columns: string[]; tables: string[]; star: boolean };

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

export type Binder = {
  /** Creates an empty table `schema.name` (or `name` in main) with these columns. */
  table(name: string, columns: Col[], schema?: string): Promise<void>;
  /** Makes unqualified names resolve in these schemas first (PostgreSQL's search_path). */
  searchPath(schemas: string[]): Promise<void>;
  describe(sql: string): Promise<BindResult>;
  close(): void;
};

/** DuckDB column types of a relational/document/file field type, as the engine loads them. */
export const stubType = (type: string) => {
  const t = type.toLowerCase();
  if (['string', 'str', 'objectid'].includes(t)) return 'VARCHAR';
  if (t === 'object' || t === 'array') return 'JSON';
  return duckType(t.replace(/ unsigned$/, ''));
};

export async function openBinder(): Promise<Binder> {
  const conn = await duckHost().open();
  const schemas = new Set<string>();
  return {
    async table(name, columns, schema) {
      let qualified = ident(name);
      if (schema && schema !== 'main') {
        if (!schemas.has(schema)) await conn.run(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
        schemas.add(schema);
        qualified = `${ident(schema)}.${ident(name)}`;
      }
      const cols = columns.length > 0 ? columns : [{ name: 'value', type: 'VARCHAR' }];
      const seen = new Set<string>();
      const defs = cols
        .filter((c) => !seen.has(c.name.toLowerCase()) && seen.add(c.name.toLowerCase()))
        .map((c) => `${ident(c.name)} ${c.type}`);
      await conn.run(`CREATE OR REPLACE TABLE ${qualified} (${defs.join(', ')})`);
    },
    async searchPath(list) {
      const path = [...list, 'main'].map((s) => s.replace(/[,']/g, '')).join(',');
      await conn.run(`SET search_path = '${path}'`);
    },
    async describe(sql) {
      try {
        const rows = await conn.run(`DESCRIBE ${withoutTemplates(sql)}`);
        return { ok: true, columns: rows.map((r) => ({ name: String(r[0]), type: String(r[1]) })) };
      } catch (err) {
        if (!(err instanceof DuckHostError) || err.code !== 'FAILED') throw err;
        return { ok: false, message: err.message.split('\n')[0].slice(0, 500) };
      }
    },
    close() {
      conn.close();
    },
  };
}

/** Column and table references of a SELECT, from DuckDB's own parser; null when it does not parse. */
export async function sqlRefs(sql: string): Promise<SqlRefs | null> {
  const text = await duckHost().serialize(withoutTemplates(sql));
  const tree = JSON.parse(text) as { error?: boolean };
  if (tree.error) return null;
  const out: SqlRefs = { columns: [], tables: [], star: false };
  const walk = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const n = node as Record<string, unknown>;
    if (n.class === 'COLUMN_REF' && Array.isArray(n.column_names)) {
      const names = n.column_names as string[];
      out.columns.push(names[names.length - 1]);
    }
    if (n.type === 'BASE_TABLE' && typeof n.table_name === 'string') out.tables.push(n.table_name);
    if (n.class === 'STAR') out.star = true;
    for (const v of Object.values(n)) walk(v);
  };
  walk(tree);
  return out;
}
