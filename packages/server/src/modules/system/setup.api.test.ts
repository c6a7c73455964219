import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { storeKind } from '../../../../../test/support/stores';
import { issueSetupCode, setupCodePath } from './setup-code';

// POST /setup: the first-run route `sluice setup` calls while `sluice serve` holds the store.
describe('first-run setup', () => {
  let t: TestApp;
  let dir: string | undefined;
  const body = (setup_code: string, organization_slug = 'first-org') => ({
    setup_code,
    organization_slug,
    email: 'Owner@Example.com',
  });

  beforeAll(async () => {
    // On a PostgreSQL server the data directory still holds the code: give it a scratch one.
    dir = storeKind() === 'postgres' ? fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-setup-')) : undefined;
    t = await startTestApp({
      env: { ...(dir ? { SLUICE_DATA_DIR: dir } : {}), SLUICE_RATE_LIMIT_PUBLIC: '8' },
    });
  });
  afterAll(async () => {
    await t.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('trades the code for the first organization once, and only with the right code', async () => {
    const config = t.rt.deps.config;
    // Before serve issued a code, nothing opens the door.
    let res = await t.call('POST', '/setup', { body: body('AAAAA-BBBBB') });
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().error.code).toBe('FORBIDDEN');

    const code = await issueSetupCode(t.rt.deps);
    expect(code).toMatch(/^[0-9A-F]{5}(-[0-9A-F]{5}){4}$/);
    const file = setupCodePath(config);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file, 'utf8').trim()).toBe(code);

    // One character off (never the code itself: a code may end in 0).
    const wrong = `${code!.slice(0, -1)}${code!.endsWith('0') ? '1' : '0'}`;
    res = await t.call('POST', '/setup', { body: body(wrong) });
    expect(res.statusCode).toBe(403);
    expect(res.body).not.toContain(code!);
    res = await t.call('POST', '/setup', { body: { ...body(code!), token: 'x' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('VALIDATION_FAILED');

    // Lower case is accepted (the code is read aloud or retyped).
    res = await t.call('POST', '/setup', { body: body(code!.toLowerCase()) });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const result = res.json();
    expect(result.organization_slug).toBe('first-org');
    expect(result.api_key).toMatch(/^slc_key_/);
    expect(result.personal_access_token).toMatch(/^slc_pat_/);
    expect(fs.existsSync(file)).toBe(false);

    // The tokens work, and the owner is the user just created.
    const org = await t.call('GET', '/organizations/first-org/members', { token: result.api_key });
    expect(org.statusCode).toBe(200);
    expect(org.json().members).toMatchObject([{ email: 'owner@example.com', role: 'owner' }]);
    expect((await t.call('GET', '/users/me', { token: result.personal_access_token })).statusCode).toBe(200);

    // Single use: the same code again, or a new code once an organization exists, is refused.
    res = await t.call('POST', '/setup', { body: body(code!, 'second-org') });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('CONFLICT');
    expect(await issueSetupCode(t.rt.deps)).toBeNull();
    expect(fs.existsSync(file)).toBe(false);
  });

  it('limits attempts per client address', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 10; i++) {
      codes.push((await t.call('POST', '/setup', { body: body('WRONG-CODE0') })).statusCode);
    }
    expect(codes).toContain(429);
  });
});
