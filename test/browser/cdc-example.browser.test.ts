import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUserPassword } from '../../packages/server/src/modules/identity/set-password';
import { createDatabase, type PostgresCluster, startPostgresCluster } from '../peers/postgres-cluster';
import { createMysqlDatabase, scratchRuntime } from '../pipelines/support';
import { asHash, MYSQL_ORDERS_ROW, mysqlHashSql, PG_ORDERS_ROW, pgHashSql } from '../pipelines/table-hash';
import { type CliProcess, repoRoot, runCli, startCli } from '../support/cli';
import { waitUntil } from '../support/runs';
import { axeViolations, launchBrowser } from './browser';

// The worked example of docs/cdc.md in the app (real Chromium against `sluice serve`):
// examples/cdc-orders applied with the CLI, then the pipeline executed from its "Validate,
// deploy and run" tab and its capture seen on the "Change capture" tab with the log it retains
// and its confirmed position; the MySQL replica equals the PostgreSQL source by hash.

const EMAIL = 'owner@example.com';
const PASSWORD = 'cdc-example-password';
const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const example = path.join(repoRoot, 'examples/cdc-orders');

describe('the cdc example in the app', { timeout: 240_000 }, () => {
  let s: Awaited<ReturnType<typeof scratchRuntime>>;
  let cluster: PostgresCluster;
  let shopUrl: string;
  let replica: Awaited<ReturnType<typeof createMysqlDatabase>>;
  let serve: CliProcess;
  let appUrl: string;
  let page: Page;
  let closeBrowser: () => Promise<void>;

  const shop = async (text: string) => {
    const c = new pg.Client({ connectionString: shopUrl });
    await c.connect();
    try {
      return (await c.query(text)).rows;
    } finally {
      await c.end();
    }
  };
  const sourceHash = async () =>
    asHash((await shop(pgHashSql('orders', PG_ORDERS_ROW("placed_at AT TIME ZONE 'UTC'"))))[0]);
  const targetHash = async () => asHash((await replica.query(mysqlHashSql('orders', MYSQL_ORDERS_ROW)))[0]);

  beforeAll(async () => {
    cluster = await startPostgresCluster({ settings: { wal_level: 'logical' } });
    shopUrl = await createDatabase(cluster.url, 'shop');
    await shop(fs.readFileSync(path.join(example, 'source.postgres.sql'), 'utf8'));
    await shop(`INSERT INTO orders SELECT g, 'customer ' || g, g * 1.5, 'new',
                  timestamptz '2026-01-01 00:00:00.5+00' + g * interval '1 minute', 'note ' || g
                  FROM generate_series(1, 120) g`);
    replica = await createMysqlDatabase(`cdcweb_${id}`);
    await replica.query(fs.readFileSync(path.join(example, 'target.mysql.sql'), 'utf8'));
    s = await scratchRuntime(`sluice_cdcweb_${id}`);
    await setUserPassword(s.rt.deps, { email: EMAIL, password: PASSWORD });
    serve = startCli(['serve', '--api-addr', '127.0.0.1:0', '--app-addr', '127.0.0.1:0'], { env: s.env });
    const [, apiUrl] = await serve.waitForStdout(/API host: (http:\/\/\S+)/);
    [, appUrl] = await serve.waitForStdout(/app host: (http:\/\/\S+)/);
    const applied = await runCli(['apply', '-f', example], {
      env: {
        SLUICE_BASE_URL: apiUrl,
        SLUICE_TOKEN: s.token,
        SLUICE_ORG: 'acme',
        ORDERS_PG_PORT: String(cluster.port),
        ORDERS_PG_PASSWORD: '',
        REPLICA_MYSQL_DATABASE: `cdcweb_${id}`,
        REPLICA_MYSQL_PASSWORD: '',
      },
    });
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    const b = await launchBrowser();
    closeBrowser = b.close;
    page = await (await b.browser.newContext({ viewport: { width: 1366, height: 860 } })).newPage();
    await page.goto(`${appUrl}/sign-in`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
  }, 180_000);

  afterAll(async () => {
    await closeBrowser?.();
    if (serve && serve.child.exitCode === null) serve.child.kill('SIGTERM');
    await serve?.exited;
    await s?.close();
    await replica?.drop();
    await cluster?.destroy();
  });

  const executeFromApp = async () => {
    await page.goto(`${appUrl}/o/acme/pipelines/orders/orders-replica?tab=deploy&env=dev`);
    await page.getByText(/Active deployment: [0-9a-f]/).waitFor();
    await page.getByRole('button', { name: 'Execute now' }).click();
    await page.waitForURL(/\/runs\/orders\/dev\/run-/);
    const slug = page.url().split('/').pop()!.split('?')[0];
    const run = await waitUntil(
      async () =>
        (await s.sql('select state from pipeline_runs where slug = $1', [slug]))[0]?.state as string,
      (state) => ['succeeded', 'failed', 'canceled'].includes(state),
      90_000,
    );
    expect(run).toBe('succeeded');
    await page.getByText('succeeded').first().waitFor();
  };

  it('runs the pipeline from the app and shows its capture with the log it keeps', async () => {
    await page.goto(`${appUrl}/o/acme/pipelines/orders/orders-replica?tab=captures`);
    const row = page.getByRole('row', { name: /orders-changes/ });
    // Deployed, no run yet: nothing on the source.
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain('not created yet');

    await executeFromApp();
    expect(await targetHash()).toEqual(await sourceHash());
    await shop(`UPDATE orders SET status = 'shipped' WHERE id % 4 = 0`);
    await shop('DELETE FROM orders WHERE id % 9 = 0');
    await shop(`INSERT INTO orders VALUES (500, 'web', 9.99, 'new', now(), NULL)`);
    await executeFromApp();
    expect(await targetHash()).toEqual(await sourceHash());

    const [slot] = await shop(`SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots`);
    await page.goto(`${appUrl}/o/acme/pipelines/orders/orders-replica?tab=captures`);
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain(slot.lsn);
    const text = (await row.textContent()) ?? '';
    expect(text).toContain('dev');
    expect(text).toContain('orders-db');
    expect(text).toContain('idle');
    // The log retained, in bytes as the app prints them, and a checkpoint time (not "never").
    expect(text).toMatch(/idle\d+(\.\d+)? (B|kB|MB|GB)/);
    expect(text).not.toContain('never');
    expect(await axeViolations(page)).toEqual([]);
  });
});
