import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { runCli, storeForCli } from '../../../test/support/cli';
import { freePort } from '../../../test/support/free-port';
import type { BootstrapResult } from '../../server/src/modules/system/bootstrap';

// The real CLI in a child process against a real API host listening on a loopback port.
describe('sluice CLI over HTTP', () => {
  let t: TestApp;
  let boot: BootstrapResult;
  let baseUrl: string;
  const api = (args: string[], token: string | undefined = boot.api_key, input?: string) =>
    runCli(args, { env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: token }, input });

  beforeAll(async () => {
    t = await startTestApp();
    boot = await t.bootstrap('acme');
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates, lists and revokes API keys with --json', async () => {
    const created = await api([
      'api-keys',
      'create',
      '--org',
      'acme',
      '--name',
      'CI deploy',
      '--role',
      'admin',
      '--description',
      'from the CLI test',
      '--json',
    ]);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(key).toMatchObject({
      slug: 'ci-deploy',
      name: 'CI deploy',
      role: 'admin',
      can_manage_api_keys: false,
      description: 'from the CLI test',
      revoked_at: null,
    });
    expect(key.token).toMatch(/^slc_key_/);
    expect(key.token.startsWith(key.token_prefix)).toBe(true);
    const asNewKey = await t.call('GET', '/organizations/acme/api-keys', { token: key.token });
    expect(asNewKey.statusCode).toBe(200);

    // --all follows the cursor one key per page; the token comes over stdin this time.
    const listed = await api(
      ['api-keys', 'list', '--org', 'acme', '--limit', '1', '--all', '--json', '--token-stdin'],
      undefined,
      `${boot.api_key}\n`,
    );
    expect(listed.code).toBe(0);
    const page = JSON.parse(listed.stdout);
    expect(page.api_keys.map((k: { slug: string }) => k.slug).sort()).toEqual(['bootstrap', 'ci-deploy']);
    expect(page.api_keys.every((k: object) => !('token' in k))).toBe(true);
    expect(page.has_more).toBe(false);

    const revoked = await api(['api-keys', 'revoke', '--org', 'acme', 'ci-deploy', '--json']);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ slug: 'ci-deploy', revoked_at: expect.any(String) });
    const afterRevoke = await t.call('GET', '/organizations/acme/api-keys', { token: key.token });
    expect(afterRevoke.statusCode).toBe(401);

    const table = await api(['api-keys', 'list', '--org', 'acme']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^SLUG\s+NAME\s+ROLE/);
    expect(table.stdout).toMatch(/ci-deploy\s+CI deploy\s+admin/);
    expect(table.stdout).not.toContain(key.token);
  });

  it('reports API errors with their code and request id (exit 1)', async () => {
    const bad = await api(['api-keys', 'list', '--org', 'acme'], 'slc_key_not-a-real-token');
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/UNAUTHENTICATED: .+ \(request_id [0-9a-f-]{36}\)/);
    expect(bad.stderr).not.toContain('slc_key_not-a-real-token');

    const invalid = await api(['api-keys', 'create', '--org', 'acme', '--name', 'x', '--role', 'Not A Slug']);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/VALIDATION_FAILED/);
    expect(invalid.stderr).toMatch(/role:/);

    const noToken = await api(['api-keys', 'list', '--org', 'acme'], '');
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toMatch(/SLUICE_TOKEN/);
  });

  it('exits 4 when the API host cannot be reached', async () => {
    const port = await freePort();
    const r = await api(['api-keys', 'list', '--org', 'acme', '--base-url', `http://127.0.0.1:${port}`]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/cannot reach the Sluice API at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
  });
});

describe('sluice store commands', () => {
  it('prints the first tokens once, then refuses with exit 2', async () => {
    const store = await storeForCli();
    try {
      const first = await runCli(['bootstrap', '--org', 'first-org', '--email', 'Owner@Example.com'], {
        env: store.env,
      });
      expect(first.code, first.stderr).toBe(0);
      const out = JSON.parse(first.stdout);
      expect(Object.keys(out).sort()).toEqual([
        'api_key',
        'organization_slug',
        'personal_access_token',
        'user_slug',
      ]);
      expect(out.organization_slug).toBe('first-org');
      expect(out.api_key).toMatch(/^slc_key_/);
      expect(out.personal_access_token).toMatch(/^slc_pat_/);
      // No password was given, so the person is told how to set one before signing in to the app.
      expect(first.stderr).toMatch(/Sign in to the app at http:\/\/\S+ .*owner@example\.com/);
      expect(first.stderr).toContain('sluice users set-password --email owner@example.com');

      const setPw = await runCli(['users', 'set-password', '--email', 'OWNER@example.com'], {
        env: store.env,
        input: 'a-long-enough-password\n',
      });
      expect(setPw.code, setPw.stderr).toBe(0);
      expect(JSON.parse(setPw.stdout)).toMatchObject({
        email: 'owner@example.com',
        user_slug: out.user_slug,
      });
      expect(setPw.stdout + setPw.stderr).not.toContain('a-long-enough-password');
      const unknown = await runCli(['users', 'set-password', '--email', 'nobody@example.com'], {
        env: store.env,
        input: 'a-long-enough-password\n',
      });
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/no account has the email address/);

      const again = await runCli(['bootstrap', '--org', 'other', '--email', 'x@example.com'], {
        env: store.env,
      });
      expect(again.code).toBe(2);
      expect(again.stdout).toBe('');
      expect(again.stderr).toMatch(/already has an organization/);

      const badSlug = await runCli(['bootstrap', '--org', 'Bad Slug', '--email', 'x@example.com'], {
        env: store.env,
      });
      expect(badSlug.code).toBe(1);
      expect(badSlug.stderr).toMatch(/--org/);

      const shortPassword = await runCli(
        ['bootstrap', '--org', 'x', '--email', 'x@example.com', '--password-stdin'],
        { env: store.env, input: 'short\n' },
      );
      expect(shortPassword.code).toBe(1);
      expect(shortPassword.stderr).toMatch(/12 to 200 characters/);
      expect(shortPassword.stderr).not.toContain('short');
    } finally {
      await store.drop();
    }
  }, 120_000);

  it('exits 3 when the database cannot be reached', async () => {
    const port = await freePort();
    const r = await runCli(['migrate'], {
      env: { DATABASE_URL: `postgres://sluice@127.0.0.1:${port}/sluice` },
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/cannot open the store \(PostgreSQL server \(DATABASE_URL\)\): ECONNREFUSED/);
  });
});
