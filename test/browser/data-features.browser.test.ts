import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAppHost } from '../../packages/server/src/app-host/app-host';
import { setUserPassword } from '../../packages/server/src/modules/identity/set-password';
import { signedHeaders } from '../../packages/server/src/modules/triggers/webhook-signature';
import { type GitHttpsPeer, startGitHttpsPeer } from '../peers/git-https';
import { commitFiles } from '../peers/git-repos';
import {
  type Call,
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  ORG,
  ok,
  pgDataSource,
} from '../pipelines/support';
import { startTestApp, type TestApp } from '../support/app';
import { createSinkDatabase, pgQuery, waitUntil } from '../support/runs';
import { axeViolations, cleanOrdersSpec, launchBrowser, screenshotBoth } from './browser';

// The screens of triggers, drift reports, contracts and proof, the command palette and form
// drafts, end to end: one server (API services + worker + app host), one chromium, real
// PostgreSQL sources and the real HTTPS git peer.

const EMAIL = 'data@example.com';
const PASSWORD = 'browser-data-password';
const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const SRC_DB = `sluice_webdata_src_${id}`;
const SINK_DB = `sluice_webdata_sink_${id}`;
const TOKEN = `glpat-WebData${randomBytes(8).toString('hex')}`;
const COUNTRIES = 'code,name\nDE,Germany\nFR,France\n';

describe('browser app: triggers, drift, contracts, proof', { timeout: 180_000 }, () => {
  let t: TestApp;
  let host: FastifyInstance;
  let base: string;
  let token: string;
  let https: GitHttpsPeer;
  let root: string;
  let sink: { drop(): Promise<unknown> };
  let closeBrowser: () => Promise<void>;
  let page: Page;
  const savedCa = process.env.GIT_SSL_CAINFO;
  const a11y: Record<string, string[]> = {};
  const call: Call = (method, url, body) => t.call(method, url, { token, body });

  const visit = async (name: string, url: string, ready: string) => {
    await page.goto(`${base}${url}`);
    await page.locator(ready).first().waitFor();
    await check(name);
  };
  const check = async (name: string) => {
    a11y[name] = await axeViolations(page);
    await screenshotBoth(page, name);
  };
  const importSchema = async () => {
    await ok(call('POST', `${ORG}/data-sources/shop-db/schema-import`), 202);
    const ds = await waitUntil(
      async () => (await call('GET', `${ORG}/data-sources/shop-db`)).json(),
      (x: any) => x.schema_status !== 'importing',
      30_000,
    );
    expect(ds.schema_status).toBe('ready');
  };
  /** Replaces the text of the page's only CodeMirror editor. */
  const typeInEditor = async (text: string) => {
    const editor = page.locator('.cm-content').first();
    await editor.click();
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.insertText(text);
  };

  beforeAll(async () => {
    https = await startGitHttpsPeer({ token: TOKEN });
    process.env.GIT_SSL_CAINFO = https.caFile;
    const repo = https.createRepo('refdata');
    root = commitFiles(repo, 'main', { 'ref/countries.csv': COUNTRIES });
    await pgQuery('postgres', `drop database if exists ${SRC_DB} with (force)`);
    await pgQuery('postgres', `create database ${SRC_DB}`);
    await pgQuery(SRC_DB, 'create table orders (id int, email varchar(100), note text)');
    sink = await createSinkDatabase(SINK_DB);
    t = await startTestApp({ worker: true });
    token = (await t.bootstrap('acme', EMAIL)).api_key;
    await setUserPassword(t.rt.deps, { email: EMAIL, password: PASSWORD });
    await createProjectAndEnvironment(call);
    await createDataSource(call, pgDataSource('shop-db', SRC_DB));
    await createDataSource(call, pgDataSource('warehouse', SINK_DB));
    await createDataSource(call, {
      type: 'git',
      name: 'refdata',
      slug: 'refdata',
      config: { repo_url: `${https.url}refdata.git`, allow_private_hosts: true },
      credentials: { auth_type: 'https', username: 'sluice', token: TOKEN },
    });
    await deployPipeline(call, {
      pipeline: 'clean',
      spec: cleanOrdersSpec,
      bindings: { 'shop-db': 'shop-db', warehouse: 'warehouse' },
    });
    await importSchema();
    host = await buildAppHost(t.rt.deps);
    await host.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(host.server.address() as AddressInfo).port}`;
    const b = await launchBrowser();
    closeBrowser = b.close;
    const context = await b.browser.newContext({ viewport: { width: 1366, height: 860 } });
    page = await context.newPage();
    await page.goto(`${base}/sign-in`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
  }, 180_000);

  afterAll(async () => {
    await closeBrowser?.();
    await host?.close();
    await t?.close();
    await https?.close();
    await sink?.drop();
    await pgQuery('postgres', `drop database if exists ${SRC_DB} with (force)`).catch(() => {});
    if (savedCa === undefined) delete process.env.GIT_SSL_CAINFO;
    else process.env.GIT_SSL_CAINFO = savedCa;
  });

  it('creates a schedule trigger, previewing its fire times with DST flags while typing', async () => {
    await page.goto(`${base}/o/acme/pipelines/shop/clean?tab=triggers&env=staging`);
    await page.getByRole('button', { name: 'New trigger' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Nightly');
    // A broken cron is refused by the server's dry run, precisely.
    await page.getByLabel('Cron').fill('61 2 * * *');
    await expect.poll(() => page.getByTestId('schedule-preview').textContent()).toMatch(/VALIDATION_FAILED/);
    // Sundays of March at 02:30 in New York: the DST change day has no 02:30.
    await page.getByLabel('Cron').fill('30 2 * 3 0');
    await page.getByLabel('Time zone').fill('America/New_York');
    const shifted = page.locator('[data-testid="schedule-preview"] tr[data-dst="gap_shifted"]');
    await shifted.first().waitFor();
    expect(await shifted.first().textContent()).toMatch(/03:00.*moved past a DST gap/);
    expect(await page.locator('[data-testid="schedule-preview"] tbody tr').count()).toBe(10);
    await page.getByLabel('When a run is still active').selectOption('buffer_one');
    await page.getByLabel('Jitter (seconds)').fill('30');
    await check('trigger-new');
    await page.getByRole('button', { name: 'Create trigger' }).click();
    await page.locator('tr[data-trigger="nightly"]').waitFor();
    const saved = await ok(
      call('GET', `${ORG}/projects/shop/environments/staging/pipelines/clean/triggers/nightly`),
      200,
    );
    expect(saved.schedule).toMatchObject({
      cron: '30 2 * 3 0',
      time_zone: 'America/New_York',
      overlap: 'buffer_one',
      jitter_seconds: 30,
    });
    await check('triggers');
    // Pause with a note, then resume, from the trigger's page.
    await page.getByRole('link', { name: 'Nightly' }).click();
    await page.getByLabel('Pause note').fill('warehouse maintenance');
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await page.getByRole('button', { name: 'Resume' }).waitFor();
    await page.getByText('warehouse maintenance').waitFor();
    await check('trigger-schedule');
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('button', { name: 'Pause', exact: true }).waitFor();
  });

  it('creates a webhook trigger whose secret is shown once, verifies a delivery and rotates it', async () => {
    await page.goto(`${base}/o/acme/pipelines/shop/clean?tab=triggers&env=staging`);
    await page.getByRole('button', { name: 'New trigger' }).click();
    await page.getByLabel('Kind').selectOption('webhook');
    await page.getByLabel('Name', { exact: true }).fill('Orders hook');
    await page.getByRole('button', { name: 'Create trigger' }).click();
    const secret = (await page.getByTestId('new-secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    const link = page.getByRole('link', { name: 'Orders hook' });
    await link.click();
    await page.getByTestId('delivery-path').waitFor();
    // The secret is not on the trigger's page, nor in its API answer.
    expect(await page.content()).not.toContain(secret);
    const path = (await page.getByTestId('delivery-path').textContent())!.replace(/^POST /, '');
    expect(path).toMatch(
      /^\/webhooks\/pipeline-triggers\/orders-hook-[a-z0-9]+\/deliveries\/\{delivery_id\}$/,
    );
    expect(await page.locator('tr[data-secret]').count()).toBe(1);
    expect(await page.locator('tr[data-secret]').first().textContent()).toContain('never');
    // A delivery signed with the secret verifies it: its last_verified_at shows.
    const body = JSON.stringify({ order: { id: 1 } });
    const delivered = await t.call('POST', path.replace('{delivery_id}', 'evt_1'), {
      body,
      headers: {
        'content-type': 'application/json',
        ...signedHeaders(secret, 'evt_1', Math.floor(Date.now() / 1000), body),
      },
    });
    expect(delivered.statusCode, delivered.body).toBe(202);
    await page.reload();
    await page.locator('tr[data-secret]').first().waitFor();
    expect(await page.locator('tr[data-secret]').first().textContent()).not.toContain('never');
    await page.locator('td', { hasText: 'evt_1' }).waitFor();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = (await page.getByTestId('new-secret').textContent())!;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await expect.poll(() => page.locator('tr[data-secret]').count()).toBe(2);
    await check('trigger-webhook');
    // Every trigger of the project in the environment, from the sidebar's list.
    await visit('triggers-all', '/o/acme/triggers?project=shop&env=staging', 'tr[data-trigger="nightly"]');
    expect(await page.locator('tr[data-trigger]').count()).toBe(2);
  });

  it('opens a drift report from the data source, with reason codes and the step that breaks', async () => {
    await pgQuery(SRC_DB, 'alter table orders drop email');
    await importSchema();
    await visit('data-source-drift', '/o/acme/data-sources/shop-db?tab=drift', 'tr[data-report]');
    await page.locator('tr[data-report] a').first().click();
    await page.getByTestId('drift-changes').waitFor();
    expect(page.url()).toMatch(/\/o\/acme\/drift\/shop\/drift-/);
    expect(await page.getByTestId('drift-changes').textContent()).toMatch(
      /column_removed_referenced.*orders\.email/,
    );
    const step = page.locator('[data-testid="drift-impacts"] tr[data-impact="step"]');
    expect(await step.textContent()).toMatch(/clean.*step clean reads column email/);
    await check('drift-report');
    // The project list keeps its filters in the URL.
    await visit('drift-reports', '/o/acme/drift?project=shop&order=asc', 'tr[data-report]');
    expect(await page.getByLabel('Order').inputValue()).toBe('asc');
  });

  it('creates a contract and its revisions, showing a backward-incompatible one precisely', async () => {
    await page.goto(`${base}/o/acme/contracts?project=shop`);
    await page.getByLabel('Contract name').fill('Clean out');
    await page.getByLabel('Contract slug (optional)').fill('clean-out');
    await page.getByLabel('Pipeline slug').fill('clean');
    await page.getByLabel('Sink step slug').fill('load');
    await page.getByRole('button', { name: 'Create contract' }).click();
    await page.getByRole('heading', { name: 'Clean out' }).waitFor();
    await page.locator('.cm-content').first().waitFor();
    await page.getByRole('button', { name: 'Create revision' }).click();
    await page.getByTestId('revision-columns').waitFor();
    await expect.poll(() => new URL(page.url()).searchParams.get('revision')).toBe('r1');
    // Dropping the promised id column breaks r1: refused, naming the change.
    await typeInEditor(JSON.stringify({ columns: [{ name: 'email', type: 'text' }] }));
    await page.getByRole('button', { name: 'Create revision' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toMatch(/CONFLICT.*contract_column_removed/);
    await page.getByRole('alert').scrollIntoViewIfNeeded();
    await check('contract');
    await page.getByLabel('Compatibility').selectOption('none');
    await page.getByRole('button', { name: 'Create revision' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('revision')).toBe('r2');
    const revisions = await ok(call('GET', `${ORG}/projects/shop/contracts/clean-out/revisions`), 200);
    expect(revisions.revisions.map((r: any) => r.slug).sort()).toEqual(['r1', 'r2']);
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download ODCS' }).click();
    expect((await download).suggestedFilename()).toBe('clean-out-r2.odcs.json');
    await visit('contracts', '/o/acme/contracts?project=shop', 'tr[data-contract]');
  });

  it('sets proof targets, observes the repository, compiles a receipt and opens its page', async () => {
    await page.goto(`${base}/o/acme/data-sources/refdata?tab=proof`);
    await page.getByLabel('Expected repository id').fill(root);
    await page.getByRole('button', { name: 'Add target' }).click();
    await page.getByLabel('Ref of target 1').fill('ref/countries.csv');
    await page.getByRole('button', { name: 'Save proof settings' }).click();
    await page.getByText('Saved.').waitFor();
    await page.getByLabel('Commit SHA or branch').fill('main');
    await page.getByRole('button', { name: 'Observe' }).click();
    const row = page.locator('tr[data-observation]').first();
    await row.locator('text=passed').waitFor({ timeout: 60_000 });
    await check('proof');
    await row.getByRole('checkbox').check();
    await page.getByRole('button', { name: 'Compile receipt' }).click();
    await page.getByTestId('receipt-verdict').waitFor();
    expect(page.url()).toMatch(/\/o\/acme\/data-sources\/refdata\/proof-receipts\/[a-z0-9-]+$/);
    expect(await page.getByTestId('receipt-verdict').textContent()).toBe('PASSED');
    await page.getByText('ref/countries.csv').first().waitFor();
    await check('proof-receipt');
  });

  it('jumps anywhere from the command palette, by keyboard', async () => {
    await page.goto(`${base}/o/acme/runs`);
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    await page.keyboard.press('ControlOrMeta+k');
    const dialog = page.getByRole('dialog', { name: 'Jump to a screen, pipeline or data source' });
    await dialog.waitFor();
    expect(await page.evaluate('document.activeElement?.getAttribute("aria-label")')).toBe('Jump to');
    await page.keyboard.type('clean');
    await dialog.getByRole('option', { name: /clean pipeline in shop/ }).waitFor();
    await check('command-palette');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/o\/acme\/pipelines\/shop\/clean$/);
    await page.keyboard.press('ControlOrMeta+k');
    await page.keyboard.type('contracts');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/o\/acme\/contracts$/);
    await page.keyboard.press('ControlOrMeta+k');
    await page.keyboard.type('api keys');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/o\/acme\/settings\/api-keys$/);
    await page.keyboard.press('ControlOrMeta+k');
    await page.keyboard.type('shop-db');
    await dialog
      .getByRole('option', { name: /data source/ })
      .first()
      .waitFor();
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/o\/acme\/data-sources\/shop-db$/);
    await page.keyboard.press('ControlOrMeta+k');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
  });

  it('keeps drafts of the new-pipeline and data-source forms across a reload, never credentials', async () => {
    await page.goto(`${base}/o/acme/pipelines/new?project=shop`);
    await page.getByLabel('Name', { exact: true }).fill('Draft pipe');
    await page.getByLabel('Slug (optional)').fill('draft-pipe');
    await expect
      .poll(() => page.evaluate('localStorage.getItem("sluice.draft.acme.pipeline-new")'))
      .toContain('draft-pipe');
    await page.reload();
    await page.getByTestId('draft-restored').waitFor();
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Draft pipe');
    expect(await page.getByLabel('Slug (optional)').inputValue()).toBe('draft-pipe');

    await page.goto(`${base}/o/acme/data-sources/new?type=postgres`);
    await page.getByLabel('Name', { exact: true }).fill('Draft DB');
    await page.getByLabel('Host', { exact: true }).fill('db.internal');
    await page.getByLabel('Password', { exact: true }).fill('draft-secret-password');
    await expect
      .poll(() => page.evaluate('localStorage.getItem("sluice.draft.acme.data-source-new.postgres")'))
      .toContain('db.internal');
    await page.reload();
    await page.getByTestId('draft-restored').waitFor();
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Draft DB');
    expect(await page.getByLabel('Host', { exact: true }).inputValue()).toBe('db.internal');
    expect(await page.getByLabel('Password', { exact: true }).inputValue()).toBe('');
    const stored = await page.evaluate('JSON.stringify(localStorage)');
    expect(stored).not.toContain('draft-secret-password');

    // Creating the pipeline clears its draft.
    await page.goto(`${base}/o/acme/pipelines/new?project=shop`);
    await page.getByTestId('draft-restored').waitFor();
    await page.getByRole('button', { name: 'Create pipeline' }).click();
    await page.getByRole('button', { name: 'Validate' }).waitFor();
    expect(await page.evaluate('localStorage.getItem("sluice.draft.acme.pipeline-new")')).toBeNull();

    const serious = Object.entries(a11y).filter(([, v]) => v.length > 0);
    expect(serious, JSON.stringify(serious, null, 1)).toEqual([]);
    expect(Object.keys(a11y).length).toBeGreaterThanOrEqual(12);
  });
});
