import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { runCli } from '../../../test/support/cli';
import { raiseNotification } from '../../server/src/modules/notifications/notifications.raise';
import type { BootstrapResult } from '../../server/src/modules/system/bootstrap';

// The alerting commands as a user runs them: a child process against a listening API host.
describe('sluice notifications and alerts', () => {
  let t: TestApp;
  let boot: BootstrapResult;
  let baseUrl: string;
  const cli = async (args: string[]) => {
    const r = await runCli([...args, '--org', 'acme'], {
      env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: boot.api_key },
    });
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r;
  };
  const json = async (args: string[]) => JSON.parse((await cli([...args, '--json'])).stdout);

  beforeAll(async () => {
    t = await startTestApp();
    boot = await t.bootstrap('acme');
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('manages destinations and policies', async () => {
    const d = await json([
      'alerts',
      'destinations',
      'create',
      '--name',
      'Ops',
      '--email',
      'a@example.com',
      '--email',
      'b@example.com',
    ]);
    expect(d).toMatchObject({
      slug: 'ops',
      non_secret_config: { recipients: ['a@example.com', 'b@example.com'] },
    });
    const p = await json([
      'alerts',
      'policies',
      'create',
      '--name',
      'Shop',
      '--scope',
      'project',
      '--project',
      'shop',
      '--destination',
      'ops',
      '--severity',
      'critical',
    ]);
    expect(p).toMatchObject({
      slug: 'shop',
      scope: 'project',
      project_slug: 'shop',
      severity: 'critical',
      destination_slugs: ['ops'],
    });
    const bad = await runCli(
      [
        'alerts',
        'policies',
        'create',
        '--org',
        'acme',
        '--name',
        'X',
        '--scope',
        'project',
        '--destination',
        'ops',
      ],
      {
        env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: boot.api_key },
      },
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('project_slug');
    expect((await json(['alerts', 'policies', 'list'])).alert_policies).toHaveLength(1);
    const table = (await cli(['alerts', 'destinations', 'list'])).stdout;
    expect(table).toMatch(/^SLUG\s+NAME/);
    expect(table).toContain('a@example.com,b@example.com');
    // Without SMTP the test is refused and says why.
    const test = await runCli(['alerts', 'destinations', 'test', 'ops', '--org', 'acme'], {
      env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: boot.api_key },
    });
    expect(test.code).toBe(1);
    expect(test.stderr).toContain('EMAIL_NOT_CONFIGURED');
    expect((await json(['alerts', 'policies', 'update', 'shop', '--disable'])).enabled).toBe(false);
    const moved = await json([
      'alerts',
      'destinations',
      'update',
      'ops',
      '--email',
      'c@example.com',
      '--disable',
    ]);
    expect(moved).toMatchObject({ enabled: false, non_secret_config: { recipients: ['c@example.com'] } });
    await cli(['alerts', 'policies', 'delete', 'shop']);
    await cli(['alerts', 'destinations', 'delete', 'ops']);
  });

  it('lists, shows, acknowledges and resolves notifications, and reads attempts', async () => {
    const [{ id }] = (await t.rt.deps.store.executeSql(`select id from organizations where slug = 'acme'`))
      .rows;
    const n = await t.rt.deps.db.transaction((tx) =>
      raiseNotification(tx, t.rt.deps, {
        organizationId: id,
        type: 'schema_import_failed',
        severity: 'warning',
        title: 'Schema import of Shop failed',
        summary: 'INVALID_OPENAPI',
        projectSlug: null,
        environmentSlug: null,
        subject: { kind: 'data_source', slug: 'shop' },
        sourceKind: 'data_source',
        sourceAction: 'refresh',
        sourceRefs: [{ kind: 'data_source', value: 'shop' }],
        sourceKey: 'cli',
      }),
    );
    const listed = await json(['notifications', 'list', '--state', 'open', '--type', 'schema_import_failed']);
    expect(listed.notifications.map((x: any) => x.slug)).toEqual([n.slug]);
    expect((await cli(['notifications', 'get', n.slug])).stdout).toContain('Schema import of Shop failed');
    expect((await json(['notifications', 'ack', n.slug])).lifecycle_state).toBe('acknowledged');
    expect((await json(['notifications', 'resolve', n.slug])).lifecycle_state).toBe('resolved');
    const attempts = await json(['alerts', 'attempts', '--notification', n.slug]);
    expect(attempts).toEqual({
      alert_delivery_attempts: [],
      has_more: false,
      next_cursor: null,
      prev_cursor: null,
    });
  });
});
