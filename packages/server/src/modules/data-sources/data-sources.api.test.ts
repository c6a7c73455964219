import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpApiPeer, startHttpApiPeer } from '../../../../../test/peers/http-api';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { dataSourceCredentials, dataSources } from '../../db/schema/index';

// Secrets that must never come back: not in a response, a log line, an event or an error.
const CANARY = 'canary-s3cr3t-7f1d2c';
const SERVICE_ACCOUNT = JSON.stringify({
  type: 'service_account',
  client_email: 'x@y.iam',
  private_key: CANARY,
});
const PEM = `-----BEGIN PRIVATE KEY-----\n${CANARY}\n-----END PRIVATE KEY-----`;

const validByType: Record<
  string,
  { config: Record<string, unknown>; credentials?: Record<string, unknown> }
> = {
  http: { config: { base_url: 'https://api.example.com/v1' }, credentials: { bearer_token: CANARY } },
  ftp: { config: { host: 'ftp.example.com' }, credentials: { username: 'u', password: CANARY } },
  git: {
    config: { repo_url: 'git@github.com:acme/etl.git' },
    credentials: { auth_type: 'ssh', ssh_private_key: PEM, ssh_known_hosts: 'github.com ssh-ed25519 AAAA' },
  },
  postgres: {
    config: { host: 'db.example.com', database: 'shop', user: 'etl' },
    credentials: { password: CANARY },
  },
  mysql: {
    config: { host: 'db.example.com', database: 'shop', user: 'etl' },
    credentials: { password: CANARY },
  },
  bigquery: {
    config: { project_id: 'acme-analytics' },
    credentials: { service_account_json: SERVICE_ACCOUNT },
  },
  snowflake: {
    config: { account: 'acme-xy12345', username: 'ETL', warehouse: 'WH' },
    credentials: { password: CANARY },
  },
  google_workspace: {
    config: { spreadsheet_id: '1AbCdEf_gh-IJ' },
    credentials: { service_account_json: SERVICE_ACCOUNT },
  },
  salesforce: {
    config: { instance_url: 'https://acme.my.salesforce.com' },
    credentials: { client_id: 'cid', client_secret: CANARY },
  },
  mongodb: {
    config: { hosts: ['mongo1.example.com:27017', 'mongo2.example.com'], database: 'app', username: 'etl' },
    credentials: { password: CANARY },
  },
  github: { config: { owner: 'acme', repo: 'etl' } },
  gitlab: { config: { project: 'acme/data/etl' } },
  s3: {
    config: { bucket: 'acme-raw', region: 'eu-central-1' },
    credentials: { access_key_id: 'AKIA1', secret_access_key: CANARY },
  },
};

describe('data sources', () => {
  let t: TestApp;
  let owner: string;
  let peer: HttpApiPeer;
  const org = '/organizations/acme/data-sources';
  const create = (body: Record<string, unknown>) => t.call('POST', org, { token: owner, body });
  const http = async (
    slug: string,
    config: Record<string, unknown>,
    credentials: Record<string, unknown> = {},
  ) => {
    const res = await create({
      type: 'http',
      name: slug,
      slug,
      config: { base_url: peer.url, allow_private_hosts: true, ...config },
      credentials,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  };
  const testConn = async (slug: string) => {
    const res = await t.call('POST', `${org}/${slug}/test-connection`, { token: owner });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const credentialRows = (slug: string) =>
    t.rt.deps.db
      .select({ status: dataSourceCredentials.status })
      .from(dataSourceCredentials)
      .innerJoin(dataSources, eq(dataSources.id, dataSourceCredentials.dataSourceId))
      .where(and(eq(dataSources.slug, slug)))
      .orderBy(dataSourceCredentials.createdAt);

  beforeAll(async () => {
    peer = await startHttpApiPeer();
    t = await startTestApp({ worker: true });
    owner = (await t.bootstrap('acme')).api_key;
  });
  afterAll(async () => {
    await t?.close();
    await peer?.close();
  });

  it('creates a data source of each of the 13 types; credentials are never returned', async () => {
    for (const [type, body] of Object.entries(validByType)) {
      const res = await create({ type, name: `My ${type}`, ...body });
      expect(res.statusCode, `${type}: ${res.body}`).toBe(201);
      const ds = res.json();
      expect(ds).toMatchObject({
        slug: `my-${type.replace('_', '-')}`,
        type,
        is_active: true,
        read_only: type === 'salesforce',
        organization_gitlab_connection: false,
        schema_status: 'not_imported',
        schema: { schema_type: 'empty', type },
        connection_revision: 1,
        last_tested_at: null,
        test_error: null,
      });
      if (body.credentials)
        expect(ds.credential).toEqual({
          kind: 'static_secret',
          status: 'active',
          updated_at: expect.any(String),
        });
      else if (type === 'github' || type === 'gitlab')
        // The hosted git providers connect through OAuth: pending until authorized.
        expect(ds.credential).toMatchObject({
          kind: 'oauth2_grant',
          status: 'pending',
          oauth: { provider: type, scopes: [], account: null, revoked_at: null },
        });
      else expect(ds.credential).toBeUndefined();
      expect(res.body).not.toContain(CANARY);
    }
    const http = (await t.call('GET', `${org}/my-http`, { token: owner })).json();
    expect(http.config).toEqual({
      base_url: 'https://api.example.com/v1',
      health_path: '/',
      timeout_seconds: 5,
      openapi_fetch_timeout_seconds: 10,
      allow_private_hosts: false,
    });
    const list = await t.call('GET', `${org}?sort_by=data_source_name&order=asc&limit=100`, { token: owner });
    expect(list.statusCode).toBe(200);
    expect(list.json().data_sources.map((d: any) => d.type)).toHaveLength(13);
    expect(list.json().data_sources[0].name).toBe('My bigquery');
    expect(list.body).not.toContain(CANARY);
    const page = (await t.call('GET', `${org}?limit=5`, { token: owner })).json();
    expect(page.data_sources).toHaveLength(5);
    expect(page.has_more).toBe(true);
    const next = (await t.call('GET', `${org}?limit=5&cursor=${page.next_cursor}`, { token: owner })).json();
    expect(next.data_sources[0].slug).not.toBe(page.data_sources[4].slug);
  });

  it('rejects invalid requests with validation errors', async () => {
    const invalid: [Record<string, unknown>, string][] = [
      [
        { type: 'http', name: 'x', config: { base_url: 'ftp://x.example' }, credentials: {} },
        'config.base_url',
      ],
      [
        {
          type: 'http',
          name: 'x',
          config: { base_url: 'https://x.example', timeout_seconds: 0 },
          credentials: {},
        },
        'config.timeout_seconds',
      ],
      [
        {
          type: 'http',
          name: 'x',
          config: { base_url: 'https://x.example' },
          credentials: { bearer_token: CANARY, username: 'u', password: CANARY },
        },
        'credentials.bearer_token',
      ],
      [
        {
          type: 'postgres',
          name: 'x',
          config: { host: 'db', database: 'd', user: 'u', port: 70000 },
          credentials: { password: 'p' },
        },
        'config.port',
      ],
      [
        { type: 'mysql', name: 'x', config: { host: 'db', database: 'd' }, credentials: { password: 'p' } },
        'config.user',
      ],
      [{ type: 'http', name: 'x', config: { base_url: 'https://x.example' } }, 'credentials'],
      [
        { type: 'http', name: 'x', config: { base_url: 'https://x.example', extra: 1 }, credentials: {} },
        'config',
      ],
      [{ type: 'github', name: 'x', config: { owner: 'a', repo: 'b' }, credentials: {} }, '(root)'],
    ];
    for (const [body, path] of invalid) {
      const res = await create(body);
      expect(res.statusCode, res.body).toBe(400);
      const error = res.json().error;
      expect(error.code).toBe('VALIDATION_FAILED');
      expect(
        error.validation_errors.map((e: any) => e.path),
        res.body,
      ).toContain(path);
      expect(res.body).not.toContain(CANARY);
    }
    const unknownType = await create({ type: 'oracle', name: 'x', config: {}, credentials: {} });
    expect(unknownType.statusCode).toBe(400);
    const badName = await create({
      type: 'http',
      name: '',
      config: { base_url: 'https://x.example' },
      credentials: {},
    });
    expect(badName.json().error.code).toBe('ENTITY_NAME_INVALID');
    const dup = await create({
      type: 'gitlab',
      name: 'again',
      slug: 'my-gitlab',
      config: { project: 'a/b' },
    });
    expect(dup.statusCode).toBe(409);
  });

  it('bumps connection_revision on config changes only, and merges config patches', async () => {
    const name = await t.call('PATCH', `${org}/my-http`, {
      token: owner,
      body: { name: 'Renamed', read_only: true },
    });
    expect(name.statusCode).toBe(200);
    expect(name.json()).toMatchObject({ name: 'Renamed', read_only: true, connection_revision: 1 });
    const cfg = await t.call('PATCH', `${org}/my-http`, {
      token: owner,
      body: { config: { timeout_seconds: 30 } },
    });
    expect(cfg.json().connection_revision).toBe(2);
    expect(cfg.json().config).toMatchObject({ base_url: 'https://api.example.com/v1', timeout_seconds: 30 });
    const same = await t.call('PATCH', `${org}/my-http`, {
      token: owner,
      body: { config: { timeout_seconds: 30 } },
    });
    expect(same.json().connection_revision).toBe(2);
    const bad = await t.call('PATCH', `${org}/my-http`, {
      token: owner,
      body: { config: { base_url: null } },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.validation_errors[0].path).toBe('config.base_url');
    const off = await t.call('PATCH', `${org}/my-http`, { token: owner, body: { is_active: false } });
    expect(off.json().is_active).toBe(false);
  });

  it('replaces credentials: the old ones become rotated, the new ones active', async () => {
    const before = (await t.call('GET', `${org}/my-s3`, { token: owner })).json();
    const res = await t.call('PUT', `${org}/my-s3/credentials`, {
      token: owner,
      body: { credentials: { access_key_id: 'AKIA2', secret_access_key: `${CANARY}-2` } },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().connection_revision).toBe(before.connection_revision + 1);
    expect(res.json().credential.status).toBe('active');
    expect(res.body).not.toContain(CANARY);
    expect((await credentialRows('my-s3')).map((r) => r.status)).toEqual(['rotated', 'active']);
    const invalid = await t.call('PUT', `${org}/my-s3/credentials`, {
      token: owner,
      body: { credentials: { access_key_id: 'A' } },
    });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().error.validation_errors[0].path).toBe('credentials.secret_access_key');
    const oauth = await t.call('PUT', `${org}/my-github/credentials`, {
      token: owner,
      body: { credentials: { token: 'x' } },
    });
    expect(oauth.statusCode).toBe(422);
    expect(oauth.json().error.code).toBe('CONNECTOR_OPERATION_UNSUPPORTED');
    const audit = (
      await t.call('GET', '/organizations/acme/security-audit-events?entity_slug=my-s3', { token: owner })
    ).json();
    expect(audit.events.map((e: any) => e.action)).toEqual(expect.arrayContaining(['rotate', 'create']));
  });

  it('takes credentials {} for a PostgreSQL server with trust authentication', async () => {
    const server = new URL(process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
    const res = await create({
      type: 'postgres',
      name: 'Trusted',
      slug: 'pg-trust',
      config: {
        host: server.hostname,
        port: Number(server.port || 5432),
        database: 'postgres',
        user: decodeURIComponent(server.username || 'postgres'),
        allow_private_hosts: true,
      },
      credentials: {},
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().credential).toMatchObject({ kind: 'static_secret', status: 'active' });
    expect(await testConn('pg-trust')).toMatchObject({ ok: true, error: null });
  });

  it('tests connections and records the outcome', async () => {
    await http('api-ok', { health_path: '/status?code=204' }, { bearer_token: CANARY });
    const ok = await testConn('api-ok');
    expect(ok).toMatchObject({ data_source_slug: 'api-ok', ok: true, error: null });
    expect(peer.requests.at(-1)?.headers.authorization).toBe(`Bearer ${CANARY}`);
    const ds = (await t.call('GET', `${org}/api-ok`, { token: owner })).json();
    expect(ds.last_tested_at).toBe(ok.tested_at);
    expect(ds.test_error).toBeNull();

    const expectFailure = async (
      slug: string,
      config: Record<string, unknown>,
      code: string,
      message?: RegExp,
    ) => {
      await http(slug, config, { username: 'ann', password: CANARY });
      const res = await testConn(slug);
      expect(res.ok, slug).toBe(false);
      expect(res.error.code, `${slug}: ${res.error.message}`).toBe(code);
      if (message) expect(res.error.message).toMatch(message);
      const stored = (await t.call('GET', `${org}/${slug}`, { token: owner })).json();
      expect(stored.test_error).toBe(res.error.message);
      return stored;
    };
    await expectFailure(
      'api-405',
      { health_path: '/status?code=405' },
      'HEALTH_PATH_NOT_GET',
      /GET-compatible health_path/,
    );
    const unauthorized = await expectFailure(
      'api-401',
      { health_path: '/status?code=401' },
      'AUTHENTICATION_FAILED',
      /credentials or permissions/,
    );
    expect(unauthorized.credential.status).toBe('failed');
    await expectFailure(
      'api-403',
      { health_path: '/status?code=403' },
      'PERMISSION_DENIED',
      /credentials or permissions/,
    );
    await expectFailure('api-closed', { base_url: 'http://127.0.0.1:1' }, 'CONNECTION_FAILED');
    await expectFailure('api-dns', { base_url: 'http://no-such-host.invalid' }, 'HOST_NOT_FOUND');
    await expectFailure('api-slow', { health_path: '/hang', timeout_seconds: 1 }, 'TIMEOUT');
    await expectFailure('api-private', { allow_private_hosts: false }, 'PRIVATE_HOST_BLOCKED');
    await expectFailure(
      'api-localhost',
      { base_url: `http://localhost:${peer.port}`, allow_private_hosts: false },
      'PRIVATE_HOST_BLOCKED',
    );
    await expectFailure(
      'api-redirect',
      { health_path: `/redirect?to=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}` },
      'PRIVATE_HOST_BLOCKED',
    );

    const events = (
      await t.call('GET', '/organizations/acme/events?entity_slug=api-401&action=test_connection', {
        token: owner,
      })
    ).json();
    expect(events.events[0].metadata).toEqual({ ok: false, error_code: 'AUTHENTICATION_FAILED' });
  });

  const waitForSchema = async (slug: string, ms = 15_000) => {
    const until = Date.now() + ms;
    for (;;) {
      const ds = (await t.call('GET', `${org}/${slug}`, { token: owner })).json();
      if (ds.schema_status !== 'importing') return ds;
      if (Date.now() > until) throw new Error(`schema import of ${slug} did not finish`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const importSchema = async (slug: string) => {
    const res = await t.call('POST', `${org}/${slug}/schema-import`, { token: owner });
    expect(res.statusCode, res.body).toBe(202);
    return res.json();
  };

  it('imports OpenAPI 3 and Swagger 2 documents and lists their operations', async () => {
    await http('shop', { openapi_url: `${peer.url}/openapi.yaml` });
    await http('legacy', { openapi_url: `${peer.url}/swagger.json` });
    await http('plain', {});
    const accepted = await importSchema('shop');
    expect(accepted).toMatchObject({
      data_source_slug: 'shop',
      schema_status: 'importing',
      enqueued: true,
      job: { kind: 'data_sources.schema_import', queue: 'data_sources.schema_import', state: 'queued' },
    });
    await importSchema('legacy');
    await importSchema('plain');
    const shop = await waitForSchema('shop');
    expect(shop.schema_status).toBe('ready');
    expect(shop.schema).toMatchObject({
      schema_type: 'openapi',
      type: 'http',
      title: 'Shop API',
      version: '2.1.0',
    });
    const ops = await t.call('GET', `${org}/shop/operations?order=asc`, { token: owner });
    expect(ops.statusCode).toBe(200);
    expect(ops.json().operations.map((o: any) => `${o.method} ${o.path}`)).toEqual([
      'GET /orders',
      'POST /orders',
      'GET /orders/{id}',
    ]);
    expect(ops.json().operations[0]).toMatchObject({
      slug: 'get-orders',
      operation_id: 'listOrders',
      tags: ['orders'],
    });
    const paged = (await t.call('GET', `${org}/shop/operations?order=asc&limit=2`, { token: owner })).json();
    const rest = (
      await t.call('GET', `${org}/shop/operations?order=asc&limit=2&cursor=${paged.next_cursor}`, {
        token: owner,
      })
    ).json();
    expect(rest.operations.map((o: any) => o.operation_id)).toEqual(['getOrder']);

    const legacy = await waitForSchema('legacy');
    expect(legacy.schema.operations.map((o: any) => o.operation_id)).toEqual(['listThings']);
    const plain = await waitForSchema('plain');
    expect(plain).toMatchObject({ schema_status: 'ready', schema: { schema_type: 'empty', type: 'http' } });
    const none = (await t.call('GET', `${org}/plain/operations`, { token: owner })).json();
    expect(none).toEqual({ operations: [], has_more: false, next_cursor: null, prev_cursor: null });
  });

  it('reports an invalid document, and skips a duplicate while an import runs', async () => {
    await http('broken', { openapi_url: `${peer.url}/invalid.json` });
    await importSchema('broken');
    const broken = await waitForSchema('broken');
    expect(broken.schema_status).toBe('failed');
    expect(broken.schema_diagnostic.code).toBe('INVALID_OPENAPI');
    expect(broken.schema_diagnostic.message).toMatch(/not valid/);

    await http('slow', { openapi_url: `${peer.url}/slow-openapi.yaml?ms=1500` });
    const first = await importSchema('slow');
    expect(first.enqueued).toBe(true);
    const second = await importSchema('slow');
    expect(second).toMatchObject({
      schema_status: 'importing',
      enqueued: false,
      started_at: first.started_at,
      job: { state: 'skipped_duplicate' },
    });
    expect((await waitForSchema('slow')).schema_status).toBe('ready');
    const again = await importSchema('slow');
    expect(again.enqueued).toBe(true);
    await waitForSchema('slow');
  });

  it('deletes data sources, and never leaks a credential into logs or events', async () => {
    const del = await t.call('DELETE', `${org}/my-ftp`, { token: owner });
    expect(del.statusCode).toBe(204);
    expect((await t.call('GET', `${org}/my-ftp`, { token: owner })).statusCode).toBe(404);
    const events = await t.call('GET', '/organizations/acme/events?limit=100', { token: owner });
    const audit = await t.call('GET', '/organizations/acme/security-audit-events?limit=100', {
      token: owner,
    });
    expect(events.json().events.length).toBeGreaterThan(10);
    for (const text of [events.body, audit.body, t.logs()]) {
      expect(text).not.toContain(CANARY);
      expect(text).not.toContain(Buffer.from(`ann:${CANARY}`).toString('base64'));
    }
  });
});
