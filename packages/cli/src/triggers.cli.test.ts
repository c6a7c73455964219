import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { runCli } from '../../../test/support/cli';
import { rewindCursor, setupTriggerPipelines, tickAt } from '../../../test/support/triggers';

// The trigger commands as a user runs them: the real CLI in a child process against a listening
// API host; `sluice webhooks sign` produces headers the delivery route accepts.

const where = ['--org', 'acme', '--project', 'shop', '--env', 'staging'];

describe('sluice triggers and webhooks', () => {
  let t: TestApp;
  let token: string;
  let baseUrl: string;
  const cli = (args: string[], extra: Record<string, string> = {}) =>
    runCli(args, { env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: token, ...extra } });
  const ok = async (args: string[], extra: Record<string, string> = {}) => {
    const r = await cli(args, extra);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r.stdout;
  };

  beforeAll(async () => {
    t = await startTestApp();
    token = (await setupTriggerPipelines(t)).owner;
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('previews, creates, lists, pauses, resumes, shows occurrences and deletes a schedule', async () => {
    const s = [...where, '--pipeline', 'nightly'];
    const preview = await ok([
      'triggers',
      'preview',
      ...s,
      '--cron',
      '30 2 * 3 0',
      '--time-zone',
      'America/New_York',
    ]);
    expect(preview).toContain('2027-03-14T03:00:00-04:00');
    expect(preview).toContain('gap_shifted');
    const created = JSON.parse(
      await ok([
        'triggers',
        'create',
        ...s,
        '--kind',
        'schedule',
        '--name',
        'Nightly',
        '--slug',
        'nightly-run',
        '--cron',
        '0 3 * * *',
        '--time-zone',
        'Europe/Berlin',
        '--overlap',
        'buffer_one',
        '--catch-up',
        'all',
        '--catch-up-max-runs',
        '3',
        '--json',
      ]),
    );
    expect(created.schedule).toMatchObject({
      cron: '0 3 * * *',
      overlap: 'buffer_one',
      catch_up: { policy: 'all', max_runs: 3 },
    });
    expect(await ok(['triggers', 'list', ...s])).toMatch(
      /nightly-run\s+schedule\s+active\s+0 3 \* \* \* Europe\/Berlin/,
    );
    expect(await ok(['triggers', 'pause', ...s, 'nightly-run', '--note', 'migration'])).toContain(
      'paused true (migration)',
    );
    expect(await ok(['triggers', 'resume', ...s, 'nightly-run'])).toContain('paused false');
    expect(await ok(['triggers', 'update', ...s, 'nightly-run', '--cron', '0 4 * * *'])).toContain(
      'cron "0 4 * * *"',
    );
    await rewindCursor(t, 'nightly-run', '2026-06-01T00:00:00.000Z');
    await tickAt(t, '2026-06-01T02:30:00Z');
    const occ = await ok(['triggers', 'occurrences', ...s, 'nightly-run']);
    expect(occ).toMatch(/2026-06-01T02:00:00.000Z\s+\S+\s+started\s+run-/);
    expect(await ok(['triggers', 'get', ...s, 'nightly-run'])).toContain(
      'last: 2026-06-01T02:00:00.000Z started',
    );
    expect(await ok(['triggers', 'delete', ...s, 'nightly-run'])).toContain('deleted');
    const missing = await cli(['triggers', 'get', ...s, 'nightly-run']);
    expect(missing.code).not.toBe(0);
  });

  it('creates a webhook, signs a body with the CLI, delivers it, and rotates the secret', async () => {
    const s = [...where, '--pipeline', 'hooked'];
    const out = await ok([
      'triggers',
      'create',
      ...s,
      '--kind',
      'webhook',
      '--name',
      'Shop hook',
      '--slug',
      'shop-hook',
      '--map',
      'region=/region',
    ]);
    const secret = out.match(/signing secret \(shown once, store it now\): (whsec_\S+)/)![1];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-cli-hook-'));
    const file = path.join(dir, 'body.json');
    const body = '{"region":"eu-west"}';
    fs.writeFileSync(file, body);
    const headers = JSON.parse(
      await ok(['webhooks', 'sign', file, '--id', 'evt_cli_1', '--json'], { SLUICE_WEBHOOK_SECRET: secret }),
    );
    expect(Object.keys(headers).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    const text = await ok(['webhooks', 'sign', file, '--id', 'evt_cli_1'], { SLUICE_WEBHOOK_SECRET: secret });
    expect(text).toMatch(
      /^webhook-id: evt_cli_1\nwebhook-timestamp: \d+\nwebhook-signature: v1,[A-Za-z0-9+/]+=*\n$/,
    );
    const res = await fetch(`${baseUrl}/webhooks/pipeline-triggers/shop-hook/deliveries/evt_cli_1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    expect(res.status, await res.clone().text()).toBe(202);
    expect(((await res.json()) as any).run.trigger_slug).toBe('shop-hook');
    const rotated = await ok(['triggers', 'rotate-secret', ...s, 'shop-hook', '--previous-valid-for', '0']);
    const fresh = rotated.match(/new signing secret \(shown once, store it now\): (whsec_\S+)/)![1];
    expect(fresh).not.toBe(secret);
    const stale = JSON.parse(
      await ok(['webhooks', 'sign', file, '--id', 'evt_cli_2', '--json'], { SLUICE_WEBHOOK_SECRET: secret }),
    );
    const refused = await fetch(`${baseUrl}/webhooks/pipeline-triggers/shop-hook/deliveries/evt_cli_2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...stale },
      body,
    });
    expect(refused.status).toBe(401);
    const noSecret = await cli(['webhooks', 'sign', file]);
    expect(noSecret.code).not.toBe(0);
    expect(noSecret.stderr).toContain('SLUICE_WEBHOOK_SECRET');
  });
});
