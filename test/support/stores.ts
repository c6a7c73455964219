import os from 'node:os';
import path from 'node:path';

// Each suite gets its own database, copied from a template that was migrated once per run:
// PGlite's first start costs seconds and ~650 MB (initdb), a copy of its directory costs milliseconds.
export type TestStoreKind = 'pglite' | 'postgres';

export const ADMIN_URL = process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    templateId: string;
  }
}

// Each test run builds its own template, so concurrent runs on one machine never share one.
export const templateDb = (id: string) => `sluice_tpl_${id}`;
export const pgliteTemplate = (id: string) => path.join(os.tmpdir(), `sluice-tpl-${id}`, 'pglite');

export function storeKind(): TestStoreKind {
  return process.env.SLUICE_TEST_STORE === 'postgres' ? 'postgres' : 'pglite';
}

export function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}
