import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { ADMIN_URL, pgliteTemplate, storeKind, templateDb, withDatabase } from './stores';

// Runs inside test workers only (inject is unavailable where globalSetup runs).
let counter = 0;
function uniqueName(prefix: string) {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${counter++}`;
}

/** A fresh store for one suite: config entries to merge, and a cleanup. */
export async function freshStore(): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  const id = inject('templateId');
  if (storeKind() === 'postgres') {
    const name = uniqueName('sluice_t');
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    try {
      await admin.query(`create database ${name} template ${templateDb(id)}`);
    } finally {
      await admin.end();
    }
    return {
      env: { DATABASE_URL: withDatabase(ADMIN_URL, name) },
      async drop() {
        const c = new pg.Client({ connectionString: ADMIN_URL });
        await c.connect();
        await c.query(`drop database if exists ${name} with (force)`).catch(() => {});
        await c.end();
      },
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-t-'));
  fs.cpSync(pgliteTemplate(id), path.join(dir, 'pgdata'), { recursive: true });
  return {
    env: { SLUICE_DATA_DIR: dir },
    async drop() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
