import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openStore } from '../../packages/server/src/db/client';
import { migrate } from '../../packages/server/src/db/migrate';
import { jobDefinitions } from '../../packages/server/src/jobs/catalog';
import { openQueue } from '../../packages/server/src/jobs/queue';
import { ADMIN_URL, pgliteTemplate, type TestStoreKind, templateDb, withDatabase } from './stores';

async function prepare(store: Awaited<ReturnType<typeof openStore>>) {
  await migrate(store);
  const q = await openQueue(store, { pollSeconds: 1, supervise: false, jobs: jobDefinitions });
  await q.stop();
}

/**
 * Builds this run's migrated template that the suites copy (fails loudly when PostgreSQL is not
 * there) and returns the teardown that removes it.
 */
export async function prepareTemplate(kind: TestStoreKind, project: TestProject) {
  const id = `${process.pid}_${randomBytes(4).toString('hex')}`;
  project.provide('templateId', id);
  const TEMPLATE_DB = templateDb(id);
  const PGLITE_TEMPLATE = pgliteTemplate(id);
  if (kind === 'postgres') {
    const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5000 });
    try {
      await admin.connect();
    } catch (err) {
      throw new Error(
        `the postgres test project needs PostgreSQL at ${ADMIN_URL} (set SLUICE_TEST_PG_URL): ${(err as Error).message}`,
      );
    }
    try {
      await admin.query(`create database ${TEMPLATE_DB}`);
    } finally {
      await admin.end();
    }
    const store = await openStore({ databaseUrl: withDatabase(ADMIN_URL, TEMPLATE_DB), dataDir: '' });
    try {
      await prepare(store);
    } finally {
      await store.close();
    }
    return async () => {
      const c = new pg.Client({ connectionString: ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${TEMPLATE_DB} with (force)`).catch(() => {});
      await c.end();
    };
  }
  const root = path.dirname(PGLITE_TEMPLATE);
  fs.rmSync(root, { recursive: true, force: true });
  fs.mkdirSync(root, { recursive: true });
  const store = await openStore({ dataDir: root });
  try {
    await prepare(store);
  } finally {
    await store.close();
  }
  // openStore keeps its database in <dir>/pgdata; that folder is the template.
  fs.renameSync(path.join(root, 'pgdata'), PGLITE_TEMPLATE);
  return async () => fs.rmSync(root, { recursive: true, force: true });
}
