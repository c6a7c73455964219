import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { runCli } from '../../../test/support/cli';
import type { BootstrapResult } from '../../server/src/modules/system/bootstrap';

const profile = {
  billing_name: 'Acme Data GmbH',
  billing_email: 'invoices@acme.example',
  address: { line1: 'Hauptstrasse 1', city: 'Berlin', postal_code: '10115' },
  country: 'DE',
};

// The real CLI in a child process against a real API host on a loopback port.
describe('sluice billing', () => {
  let t: TestApp;
  let boot: BootstrapResult;
  let baseUrl: string;
  const cli = (args: string[], token: string, input?: string) =>
    runCli(args, { env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: token }, input });

  beforeAll(async () => {
    t = await startTestApp();
    boot = await t.bootstrap('acme');
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("sets and shows an organization's profile and the user's own", async () => {
    const missing = await cli(['billing', 'get', '--org', 'acme'], boot.api_key);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('NOT_FOUND');

    const set = await cli(
      ['billing', 'set', '--org', 'acme', '-f', '-'],
      boot.api_key,
      JSON.stringify(profile),
    );
    expect(set.code).toBe(0);
    expect(set.stderr).toBe('billing profile created\n');
    expect(set.stdout).toContain('10115 Berlin, DE');

    const got = await cli(['billing', 'get', '--org', 'acme', '--json'], boot.api_key);
    expect(JSON.parse(got.stdout)).toMatchObject({
      ...profile,
      owner_type: 'organization',
      owner_slug: 'acme',
    });

    const mine = await cli(
      ['billing', 'set', '-f', '-', '--json'],
      boot.personal_access_token,
      JSON.stringify({ ...profile, billing_name: 'Me' }),
    );
    expect(mine.code).toBe(0);
    expect(JSON.parse(mine.stdout)).toMatchObject({ owner_type: 'user', billing_name: 'Me' });

    const bad = await cli(
      ['billing', 'set', '-f', '-'],
      boot.personal_access_token,
      JSON.stringify({ ...profile, country: 'XX' }),
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('country');
  });
});
