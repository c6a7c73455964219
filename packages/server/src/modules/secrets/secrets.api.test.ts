import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { DecryptionError } from '../../crypto/keyring';
import { rotateKeys } from '../../crypto/rotate';
import { environmentSecrets, environments, organizations } from '../../db/schema/index';
import { resolveSecrets, secretKeys } from './secrets.resolve';

describe('environment secrets', () => {
  let t: TestApp;
  let owner: string;
  let pat: string;
  let orgId: string;
  let stagingId: string;
  const responses: string[] = [];
  const canary = (label: string) => `canary-${label}-${randomBytes(12).toString('hex')}`;
  const values = new Map<string, string>();
  const base = '/organizations/acme/environments';

  // Every response body is kept, to prove no secret value ever leaves in one.
  const call: TestApp['call'] = async (method, url, opts) => {
    const res = await t.call(method, url, opts);
    responses.push(res.body);
    return res;
  };
  const put = (env: string, key: string, body: Record<string, unknown>, query = '') =>
    call('PUT', `${base}/${env}/secrets/${key}${query}`, { token: owner, body });

  beforeAll(async () => {
    t = await startTestApp();
    const boot = await t.bootstrap('acme');
    owner = boot.api_key;
    pat = boot.personal_access_token;
    for (const body of [
      { name: 'Staging', slug: 'staging' },
      { name: 'Production', slug: 'prod', protected: true },
    ]) {
      await t.call('POST', `${base}`, { token: owner, body });
    }
    const db = t.rt.deps.db;
    [{ id: orgId }] = await db.select().from(organizations).where(eq(organizations.slug, 'acme'));
    [{ id: stagingId }] = await db
      .select()
      .from(environments)
      .where(and(eq(environments.organizationId, orgId), eq(environments.slug, 'staging')));
  });
  afterAll(() => t?.close());

  it('creates and replaces secrets, answering metadata only', async () => {
    for (const key of ['API_TOKEN', 'DB_PASSWORD', '_private', 'a_lower', '__proto__']) {
      const value = canary(key.toLowerCase());
      values.set(key, value);
      const res = await put('staging', key, { value, description: `the ${key}` });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({
        environment_slug: 'staging',
        key,
        description: `the ${key}`,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
    }
    // Replace: new value, description kept when omitted, same record.
    const replaced = canary('api-token-2');
    values.set('API_TOKEN', replaced);
    const res = await put('staging', 'API_TOKEN', { value: replaced });
    expect(res.statusCode).toBe(200);
    expect(res.json().description).toBe('the API_TOKEN');
    expect(res.json().updated_at > res.json().created_at).toBe(true);
    const cleared = await put('staging', 'a_lower', { value: values.get('a_lower')!, description: null });
    expect(cleared.json().description).toBeNull();

    const resolved = await resolveSecrets(t.rt.deps.db, t.rt.deps.keyring, orgId, stagingId);
    expect(resolved).toEqual(Object.fromEntries(values));
    expect(Object.getPrototypeOf(resolved)).toBe(Object.prototype);
    expect(await secretKeys(t.rt.deps.db, orgId, stagingId)).toEqual([...values.keys()].sort());
  });

  it('lists keys with the shared list shape and cursors (keys with underscores)', async () => {
    const walk = async (q: string, direction = 'next') => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let last: any;
      do {
        const url: string = `${base}/staging/secrets?limit=2&${q}${cursor ? `&cursor=${cursor}&direction=${direction}` : ''}`;
        const res = await call('GET', url, { token: owner });
        expect(res.statusCode).toBe(200);
        last = res.json();
        expect(Object.keys(last).sort()).toEqual([
          'environment_secrets',
          'has_more',
          'next_cursor',
          'prev_cursor',
        ]);
        for (const s of last.environment_secrets) {
          expect(Object.keys(s).sort()).toEqual([
            'created_at',
            'description',
            'environment_slug',
            'key',
            'updated_at',
          ]);
          seen.push(s.key);
        }
        cursor = last.next_cursor;
      } while (cursor);
      return { seen, last };
    };
    const byKey = await walk('sort_by=environment_secret_key&order=asc');
    // Keys sort by code point on every store (not by the database's locale).
    expect(byKey.seen).toEqual(['API_TOKEN', 'DB_PASSWORD', '__proto__', '_private', 'a_lower']);
    const byKeyDesc = await walk('sort_by=environment_secret_key');
    expect(byKeyDesc.seen).toEqual([...byKey.seen].reverse());
    const byCreated = await walk('sort_by=environment_secret_created_at');
    expect(byCreated.seen.sort()).toEqual([...values.keys()].sort());
    // Walking back from the last page returns the page before it.
    const first = (await call('GET', `${base}/staging/secrets?limit=2`, { token: owner })).json();
    const second = (
      await call('GET', `${base}/staging/secrets?limit=2&cursor=${first.next_cursor}`, { token: owner })
    ).json();
    const back = (
      await call('GET', `${base}/staging/secrets?limit=2&direction=prev&cursor=${second.prev_cursor}`, {
        token: owner,
      })
    ).json();
    expect(back.environment_secrets.map((s: any) => s.key)).toEqual(
      first.environment_secrets.map((s: any) => s.key),
    );
    const bad = await call('GET', `${base}/staging/secrets?cursor=2024-01-01T00:00:00.000Z_API_TOKEN`, {
      token: owner,
    });
    expect(bad.statusCode).toBe(400);
  });

  it('validates keys and values without echoing the value', async () => {
    for (const key of ['1ABC', 'a-b', 'K'.repeat(101)]) {
      expect((await put('staging', key, { value: 'x' })).statusCode).toBe(400);
    }
    expect((await put('staging', 'K'.repeat(100), { value: 'x' })).statusCode).toBe(201);
    await call('DELETE', `${base}/staging/secrets/${'K'.repeat(100)}`, { token: owner });
    expect((await put('staging', 'EMPTY', { value: '' })).statusCode).toBe(400);
    const long = `${canary('too-long')}${'x'.repeat(65536)}`;
    const tooLong = await put('staging', 'LONG', { value: long });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.body).not.toContain('canary-too-long');
    expect((await put('staging', 'X', { value: 'v', extra: 1 })).statusCode).toBe(400);
    expect((await put('missing', 'X', { value: 'v' })).statusCode).toBe(404);
    const missing = await call('DELETE', `${base}/staging/secrets/NOPE`, { token: owner });
    expect(missing.statusCode).toBe(404);
  });

  it('needs the exact slug for every write to a protected environment', async () => {
    const code = 'PROTECTED_ENVIRONMENT_CONFIRMATION_REQUIRED';
    const value = canary('prod');
    for (const [body, query] of [
      [{ value }, ''],
      [{ value, protected_environment_confirmation: 'staging' }, ''],
      [{ value }, '?protected_environment_confirmation=staging'],
    ] as const) {
      const r = await put('prod', 'PROD_KEY', body, query);
      expect(r.statusCode).toBe(409);
      expect(r.json().error.code).toBe(code);
    }
    expect(
      (await put('prod', 'PROD_KEY', { value, protected_environment_confirmation: 'prod' })).statusCode,
    ).toBe(201);
    expect(
      (await put('prod', 'PROD_KEY', { value }, '?protected_environment_confirmation=prod')).statusCode,
    ).toBe(200);
    for (const q of ['', '?protected_environment_confirmation=staging']) {
      const r = await call('DELETE', `${base}/prod/secrets/PROD_KEY${q}`, { token: owner });
      expect(r.statusCode).toBe(409);
      expect(r.json().error.code).toBe(code);
    }
    const del = await call(
      'DELETE',
      `${base}/prod/secrets/PROD_KEY?protected_environment_confirmation=prod`,
      {
        token: owner,
      },
    );
    expect(del.statusCode).toBe(204);
    values.set('prod:PROD_KEY', value);
  });

  it('records events with the key only', async () => {
    const activity = (
      await call('GET', '/organizations/acme/events?entity_type=environment&entity_slug=staging&limit=100', {
        token: owner,
      })
    ).json().events;
    const audit = (
      await call(
        'GET',
        '/organizations/acme/security-audit-events?entity_type=environment&entity_slug=staging&limit=100',
        { token: owner },
      )
    ).json().events;
    const secretEvents = audit.filter((e: any) => e.metadata.key);
    expect(secretEvents.length).toBeGreaterThanOrEqual(6);
    for (const e of secretEvents) expect(Object.keys(e.metadata)).toEqual(['key']);
    expect(activity.filter((e: any) => e.metadata.key).length).toBe(secretEvents.length);
    expect(secretEvents.map((e: any) => e.action)).toEqual(
      expect.arrayContaining(['create', 'update', 'delete']),
    );
  });

  it('fails loudly on a tampered value and survives key rotation', async () => {
    const { db, keyring } = t.rt.deps;
    const [row] = await db
      .select()
      .from(environmentSecrets)
      .where(and(eq(environmentSecrets.environmentId, stagingId), eq(environmentSecrets.key, 'DB_PASSWORD')));
    const raw = Buffer.from(row.ciphertext, 'base64');
    raw[raw.length - 1] ^= 0x01;
    await db
      .update(environmentSecrets)
      .set({ ciphertext: raw.toString('base64') })
      .where(eq(environmentSecrets.id, row.id));
    await expect(resolveSecrets(db, keyring, orgId, stagingId)).rejects.toBeInstanceOf(DecryptionError);
    // A valid ciphertext moved to another record does not open either.
    const [other] = await db
      .select()
      .from(environmentSecrets)
      .where(and(eq(environmentSecrets.environmentId, stagingId), eq(environmentSecrets.key, 'API_TOKEN')));
    await db
      .update(environmentSecrets)
      .set({ ciphertext: other.ciphertext, kid: other.kid })
      .where(eq(environmentSecrets.id, row.id));
    await expect(resolveSecrets(db, keyring, orgId, stagingId)).rejects.toBeInstanceOf(DecryptionError);
    await db
      .update(environmentSecrets)
      .set({ ciphertext: row.ciphertext, kid: row.kid })
      .where(eq(environmentSecrets.id, row.id));

    const report = await rotateKeys(db, keyring);
    expect(report.kid).not.toBe(row.kid);
    expect(report.tables.environment_secret).toBe(values.size - 1);
    const kids = await db.select({ kid: environmentSecrets.kid }).from(environmentSecrets);
    expect(new Set(kids.map((k) => k.kid))).toEqual(new Set([report.kid]));
    const resolved = await resolveSecrets(db, keyring, orgId, stagingId);
    expect(resolved).toEqual(Object.fromEntries([...values].filter(([k]) => !k.startsWith('prod:'))));
    // Writes after the rotation use the new key.
    const after = canary('after-rotation');
    values.set('AFTER', after);
    await put('staging', 'AFTER', { value: after });
    const [newest] = await db
      .select()
      .from(environmentSecrets)
      .where(and(eq(environmentSecrets.environmentId, stagingId), eq(environmentSecrets.key, 'AFTER')));
    expect(newest.kid).toBe(report.kid);
  });

  it('checks permissions and tenancy', async () => {
    const viewer = (
      await t.call('POST', '/organizations/acme/api-keys', {
        token: owner,
        body: { name: 'v', role: 'viewer' },
      })
    ).json().token;
    expect((await call('GET', `${base}/staging/secrets`, { token: viewer })).statusCode).toBe(200);
    const denied = await call('PUT', `${base}/staging/secrets/X`, { token: viewer, body: { value: 'v' } });
    expect(denied.statusCode).toBe(403);

    await t.call('POST', '/organizations', { token: pat, body: { name: 'Globex', slug: 'globex' } });
    const foreign = (
      await t.call('POST', '/organizations/globex/api-keys', {
        token: pat,
        body: { name: 'globex owner', role: 'owner' },
      })
    ).json().token;
    expect((await call('GET', `${base}/staging/secrets`, { token: foreign })).statusCode).toBe(404);
    const write = await call('PUT', `${base}/staging/secrets/API_TOKEN`, {
      token: foreign,
      body: { value: 'x' },
    });
    expect(write.statusCode).toBe(404);
    expect((await call('DELETE', `${base}/staging/secrets/API_TOKEN`, { token: foreign })).statusCode).toBe(
      404,
    );
    // Same key names in another organization's environment stay separate.
    await t.call('POST', '/organizations/globex/environments', { token: foreign, body: { name: 'Staging' } });
    const theirs = await call('PUT', '/organizations/globex/environments/staging/secrets/API_TOKEN', {
      token: foreign,
      body: { value: canary('globex') },
    });
    expect(theirs.statusCode).toBe(201);
    const ours = await resolveSecrets(t.rt.deps.db, t.rt.deps.keyring, orgId, stagingId);
    expect(ours.API_TOKEN).toBe(values.get('API_TOKEN'));
  });

  it('never lets a value out: responses, logs, events, or any table in plaintext', async () => {
    const secrets = [...values.values()];
    expect(secrets.length).toBeGreaterThan(5);
    const everything = responses.join('\n');
    const logs = t.logs();
    expect(logs.length).toBeGreaterThan(0);
    const { rows: tables } = await t.rt.deps.store.executeSql(
      `select table_schema, table_name from information_schema.tables
       where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
    );
    expect(tables.map((r: any) => r.table_name)).toContain('environment_secrets');
    let dump = '';
    for (const { table_schema, table_name } of tables) {
      const { rows } = await t.rt.deps.store.executeSql(
        `select row_to_json(t)::text as j from "${table_schema}"."${table_name}" t`,
      );
      dump += rows.map((r: any) => r.j).join('\n');
    }
    expect(dump).toContain('API_TOKEN');
    for (const value of secrets) {
      expect(everything).not.toContain(value);
      expect(logs).not.toContain(value);
      expect(dump).not.toContain(value);
      expect(dump).not.toContain(Buffer.from(value).toString('base64'));
    }
  });
});
