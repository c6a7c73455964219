import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { runCli } from '../../../test/support/cli';
import { setupTriggerPipelines } from '../../../test/support/triggers';

// One CLI grammar (docs/cli.md "One grammar"), as a newcomer met its seams: every group takes
// --org from the flag, SLUICE_ORG or the login profile; the scope flags are spelled the same
// everywhere; events have `list`; a failed connection test exits 1; a schedule defaults to UTC.
describe('sluice: one grammar across command groups', () => {
  let t: TestApp;
  let token: string;
  let baseUrl: string;
  let config: string;
  const cli = (args: string[], env: Record<string, string> = {}, input?: string) =>
    runCli(args, { env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: token, ...env }, input });
  const ok = async (args: string[], env: Record<string, string> = {}) => {
    const r = await cli(args, env);
    expect(r.code, `sluice ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
    return r.stdout;
  };
  const where = ['--project', 'shop', '--env', 'staging'];

  beforeAll(async () => {
    t = await startTestApp();
    token = (await setupTriggerPipelines(t)).owner;
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
    config = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-grammar-'));
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(config, { recursive: true, force: true });
  });

  it('alerts and notifications take --org from SLUICE_ORG and from the login profile', async () => {
    const org = { SLUICE_ORG: 'acme' };
    expect(await ok(['alerts', 'destinations', 'list'], org)).toMatch(/^SLUG/m);
    expect(await ok(['alerts', 'policies', 'list'], org)).toMatch(/^SLUG/m);
    expect(await ok(['notifications', 'list'], org)).toMatch(/^[A-Z]/m);

    // A profile stored by `sluice login` (token from standard input), and nothing else.
    const login = await runCli(['login', '--base-url', baseUrl, '--org', 'acme'], {
      env: { SLUICE_CONFIG_DIR: config },
      input: `${token}\n`,
    });
    expect(login.code, login.stderr).toBe(0);
    const profile = { SLUICE_CONFIG_DIR: config };
    for (const args of [
      ['alerts', 'destinations', 'list', '--json'],
      ['notifications', 'list', '--json'],
      ['events', 'list', '--limit', '1', '--json'],
    ]) {
      const r = await runCli(args, { env: profile });
      expect(r.code, `sluice ${args.join(' ')}: ${r.stderr}`).toBe(0);
    }
  });

  it('lists events with `events list` (and still with bare `events`)', async () => {
    const listed = JSON.parse(await ok(['events', 'list', '--org', 'acme', '--limit', '5', '--json']));
    expect(listed.events.length).toBeGreaterThan(0);
    const bare = JSON.parse(await ok(['events', '--org', 'acme', '--limit', '5', '--json']));
    expect(bare.events.map((e: { slug: string }) => e.slug)).toEqual(
      listed.events.map((e: { slug: string }) => e.slug),
    );
    expect(await ok(['events', 'list', '--org', 'acme', '--entity-type', 'pipeline'])).toMatch(
      /^OCCURRED_AT\s+ACTOR_TYPE/m,
    );
    await ok(['security-events', 'list', '--org', 'acme', '--json']);
  });

  it('spells the environment --env everywhere; --environment stays a hidden alias', async () => {
    const policy = JSON.parse(
      await ok([
        'alerts',
        'destinations',
        'create',
        '--org',
        'acme',
        '--name',
        'Ops',
        '--email',
        'ops@example.com',
        '--json',
      ]),
    );
    const created = JSON.parse(
      await ok([
        'alerts',
        'policies',
        'create',
        '--org',
        'acme',
        '--name',
        'Staging failures',
        '--scope',
        'project_environment',
        ...where,
        '--destination',
        policy.slug,
        '--json',
      ]),
    );
    expect(created).toMatchObject({ project_slug: 'shop', environment_slug: 'staging' });
    await ok(['notifications', 'list', '--org', 'acme', ...where, '--json']);
    await ok(['notifications', 'list', '--org', 'acme', '--environment', 'staging', '--json']);
    const help = await ok(['notifications', 'list', '--help']);
    expect(help).toContain('--env <slug>');
    expect(help).not.toContain('--environment');
  });

  it('exits 1 when a connection test fails, printing the result', async () => {
    // shop-api points at 127.0.0.1:9, where nothing listens.
    const r = await cli(['data-sources', 'test', '--org', 'acme', 'shop-api']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^ok: +false$/m);
    expect(r.stderr).toMatch(/connection test of shop-api failed: [A-Z_]+: /);
    const json = await cli(['data-sources', 'test', '--org', 'acme', 'shop-api', '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false });
  });

  it('creates a schedule in UTC without --time-zone and reports a cron error first', async () => {
    const s = ['--org', 'acme', ...where, '--pipeline', 'nightly', '--kind', 'schedule'];
    expect(await ok(['triggers', 'create', '--help'])).toMatch(/--time-zone <iana>[\s\S]*default: "UTC"/);
    const bad = await cli(['triggers', 'create', ...s, '--name', 'Bad', '--cron', '61 * * * *']);
    expect(bad.code).toBe(1);
    const firstDetail = bad.stderr.split('\n').find((l) => l.startsWith('  '));
    expect(firstDetail, bad.stderr).toMatch(/cron/);
    expect(bad.stderr).not.toContain('time_zone');
    const created = JSON.parse(
      await ok(['triggers', 'create', ...s, '--name', 'Hourly', '--cron', '0 * * * *', '--json']),
    );
    expect(created.schedule).toMatchObject({ cron: '0 * * * *', time_zone: 'UTC' });
  });
});
