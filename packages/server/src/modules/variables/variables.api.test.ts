import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { environments, organizations } from '../../db/schema/index';
import { resolveVariables } from './variables.service';

describe('runtime variables', () => {
  let t: TestApp;
  let owner: string;
  let pat: string;
  const base = '/organizations/acme/environments';
  const put = (env: string, key: string, body: Record<string, unknown>, query = '') =>
    t.call('PUT', `${base}/${env}/variables/${key}${query}`, { token: owner, body });

  beforeAll(async () => {
    t = await startTestApp();
    const boot = await t.bootstrap('acme');
    owner = boot.api_key;
    pat = boot.personal_access_token;
    for (const body of [
      { name: 'Staging', slug: 'staging' },
      { name: 'Production', slug: 'prod', protected: true },
    ]) {
      await t.call('POST', base, { token: owner, body });
    }
  });
  afterAll(() => t?.close());

  it('creates, reads, replaces, lists and deletes variables', async () => {
    const created = await put('staging', 'REGION', { value: 'eu-west-1', description: 'AWS region' });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({
      environment_slug: 'staging',
      key: 'REGION',
      value: 'eu-west-1',
      description: 'AWS region',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await put('staging', 'EMPTY_OK', { value: '' })).json().value).toBe('');
    expect((await put('staging', 'batch_size', { value: '500' })).statusCode).toBe(201);
    const replaced = await put('staging', 'REGION', { value: 'us-east-1' });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json()).toMatchObject({ value: 'us-east-1', description: 'AWS region' });
    const got = await t.call('GET', `${base}/staging/variables/REGION`, { token: owner });
    expect(got.json()).toMatchObject({ key: 'REGION', value: 'us-east-1' });
    expect((await t.call('GET', `${base}/staging/variables/NOPE`, { token: owner })).statusCode).toBe(404);

    const page1 = (
      await t.call('GET', `${base}/staging/variables?sort_by=runtime_variable_key&order=asc&limit=2`, {
        token: owner,
      })
    ).json();
    expect(page1.runtime_variables.map((v: any) => v.key)).toEqual(['EMPTY_OK', 'REGION']);
    expect(page1.has_more).toBe(true);
    const page2 = (
      await t.call(
        'GET',
        `${base}/staging/variables?sort_by=runtime_variable_key&order=asc&limit=2&cursor=${page1.next_cursor}`,
        { token: owner },
      )
    ).json();
    expect(page2.runtime_variables.map((v: any) => v.key)).toEqual(['batch_size']);
    expect(page2.has_more).toBe(false);

    const db = t.rt.deps.db;
    const [org] = await db.select().from(organizations).where(eq(organizations.slug, 'acme'));
    const [env] = await db
      .select()
      .from(environments)
      .where(and(eq(environments.organizationId, org.id), eq(environments.slug, 'staging')));
    expect(await resolveVariables(db, org.id, env.id)).toEqual({
      EMPTY_OK: '',
      REGION: 'us-east-1',
      batch_size: '500',
    });

    expect((await t.call('DELETE', `${base}/staging/variables/EMPTY_OK`, { token: owner })).statusCode).toBe(
      204,
    );
    expect((await t.call('DELETE', `${base}/staging/variables/EMPTY_OK`, { token: owner })).statusCode).toBe(
      404,
    );
    const events = (
      await t.call(
        'GET',
        '/organizations/acme/events?entity_type=environment&entity_slug=staging&limit=100',
        {
          token: owner,
        },
      )
    ).json().events;
    expect(
      events
        .filter((e: any) => e.metadata.runtime_variable_key === 'EMPTY_OK')
        .map((e: any) => e.action)
        .sort(),
    ).toEqual(['create', 'delete']);
  });

  it('validates keys, values and bodies', async () => {
    for (const key of ['9LIVES', 'with-dash', 'V'.repeat(101)]) {
      expect((await put('staging', key, { value: 'x' })).statusCode).toBe(400);
    }
    expect((await put('staging', 'BIG', { value: 'x'.repeat(65537) })).statusCode).toBe(400);
    expect((await put('staging', 'BIG', { value: 'x'.repeat(65536) })).statusCode).toBe(201);
    expect((await put('staging', 'X', { value: 'v', secret: true })).statusCode).toBe(400);
    expect((await put('staging', 'X', { value: 1 })).statusCode).toBe(400);
    expect((await put('staging', 'X', { value: 'v', description: 'd'.repeat(2001) })).statusCode).toBe(400);
  });

  it('needs the exact slug to change a protected environment', async () => {
    const code = 'PROTECTED_ENVIRONMENT_CONFIRMATION_REQUIRED';
    for (const [body, query] of [
      [{ value: 'v' }, ''],
      [{ value: 'v', protected_environment_confirmation: 'staging' }, ''],
      [{ value: 'v' }, '?protected_environment_confirmation=staging'],
    ] as const) {
      const r = await put('prod', 'MODE', body, query);
      expect(r.statusCode).toBe(409);
      expect(r.json().error.code).toBe(code);
    }
    expect(
      (await put('prod', 'MODE', { value: 'v', protected_environment_confirmation: 'prod' })).statusCode,
    ).toBe(201);
    // Reading needs nothing.
    expect((await t.call('GET', `${base}/prod/variables/MODE`, { token: owner })).statusCode).toBe(200);
    for (const q of ['', '?protected_environment_confirmation=staging']) {
      const r = await t.call('DELETE', `${base}/prod/variables/MODE${q}`, { token: owner });
      expect(r.json().error.code).toBe(code);
    }
    const del = await t.call(
      'DELETE',
      `${base}/prod/variables/MODE?protected_environment_confirmation=prod`,
      {
        token: owner,
      },
    );
    expect(del.statusCode).toBe(204);
  });

  it('refuses writes to a deleted environment and hides variables from other organizations', async () => {
    await t.call('POST', base, { token: owner, body: { name: 'Gone', slug: 'gone' } });
    await put('gone', 'A', { value: '1' });
    await t.call('DELETE', `${base}/gone`, { token: owner });
    expect((await put('gone', 'A', { value: '2' })).statusCode).toBe(409);
    expect((await t.call('GET', `${base}/gone/variables/A`, { token: owner })).json().value).toBe('1');

    await t.call('POST', '/organizations', { token: pat, body: { name: 'Globex', slug: 'globex' } });
    const foreign = (
      await t.call('POST', '/organizations/globex/api-keys', {
        token: pat,
        body: { name: 'globex owner', role: 'owner' },
      })
    ).json().token;
    expect((await t.call('GET', `${base}/staging/variables`, { token: foreign })).statusCode).toBe(404);
    expect((await t.call('GET', `${base}/staging/variables/REGION`, { token: foreign })).statusCode).toBe(
      404,
    );
    const write = await t.call('PUT', `${base}/staging/variables/REGION`, {
      token: foreign,
      body: { value: 'x' },
    });
    expect(write.statusCode).toBe(404);
  });
});
