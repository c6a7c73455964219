import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import mysqlDriver from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SilentTcpServer, startSilentTcpServer } from '../../../../../test/peers/silent-tcp';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { freePort } from '../../../../../test/support/free-port';
import { dataSources, organizations, queries } from '../../db/schema/index';

// Saved queries over HTTP against the real PostgreSQL (127.0.0.1:5432, trust) and MariaDB
// (127.0.0.1:3306, a dedicated user with a password). Scratch databases are created here and
// dropped afterwards; unreachable servers fail the suite.

const suffix = randomBytes(4).toString('hex');
const PG_DB = `sluice_qa_pg_${suffix}`;
const MY_DB = `sluice_qa_my_${suffix}`;
const MY_USER = `sluice_q_${suffix}`;
const MY_PASSWORD = `pw-${randomBytes(8).toString('hex')}`;
const PG_ADMIN = 'postgres://postgres@127.0.0.1:5432';

async function pgAdmin<T>(database: string, work: (c: pg.Client) => Promise<T>) {
  const c = new pg.Client({ connectionString: `${PG_ADMIN}/${database}` });
  await c.connect();
  try {
    return await work(c);
  } finally {
    await c.end();
  }
}

async function myAdmin<T>(work: (c: mysqlDriver.Connection) => Promise<T>) {
  const c = await mysqlDriver.createConnection({ host: '127.0.0.1', port: 3306, user: 'root' });
  try {
    return await work(c);
  } finally {
    await c.end();
  }
}

const pgConfig = {
  host: '127.0.0.1',
  port: 5432,
  database: PG_DB,
  user: 'postgres',
  allow_private_hosts: true,
};
const myConfig = { host: '127.0.0.1', port: 3306, database: MY_DB, user: MY_USER, allow_private_hosts: true };

describe('saved queries', () => {
  let t: TestApp;
  let owner: string;
  let orgId: string;
  let silent: SilentTcpServer;
  const base = '/organizations/acme';

  async function addDataSource(
    slug: string,
    type: string,
    config: Record<string, unknown>,
    opts: { readOnly?: boolean; password?: string } = {},
  ) {
    const res = await t.call('POST', `${base}/data-sources`, {
      token: owner,
      body: {
        type,
        name: slug,
        slug,
        config,
        ...(opts.password !== undefined ? { credentials: { password: opts.password } } : {}),
        ...(opts.readOnly !== undefined ? { read_only: opts.readOnly } : {}),
      },
    });
    expect(res.statusCode, res.body).toBe(201);
  }

  const call = (method: string, path: string, body?: unknown, token = owner) =>
    t.call(method, `${base}${path}`, { token, body });

  async function saveQuery(slug: string, dataSource: string, sql: string) {
    const res = await call('POST', '/queries', {
      name: slug,
      slug,
      data_source_slug: dataSource,
      statement: { type: 'sql', sql },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  }

  const execute = async (slug: string, parameters: Record<string, unknown> = {}) => {
    const res = await call('POST', `/queries/${slug}:execute`, { parameters });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  beforeAll(async () => {
    await pgAdmin('postgres', (c) => c.query(`CREATE DATABASE ${PG_DB}`));
    await pgAdmin(PG_DB, async (c) => {
      await c.query('CREATE TABLE t (id integer PRIMARY KEY, name text NOT NULL)');
      await c.query("INSERT INTO t VALUES (1, 'alpha'), (2, 'beta'), (3, 'gamma')");
      await c.query('CREATE TABLE inj (v text)');
    });
    await myAdmin(async (c) => {
      await c.query(`CREATE DATABASE ${MY_DB}`);
      await c.query(`CREATE USER '${MY_USER}'@'127.0.0.1' IDENTIFIED BY '${MY_PASSWORD}'`);
      await c.query(`GRANT ALL ON ${MY_DB}.* TO '${MY_USER}'@'127.0.0.1'`);
      await c.query(`CREATE TABLE ${MY_DB}.t (id int PRIMARY KEY, name varchar(100) NOT NULL)`);
      await c.query(`INSERT INTO ${MY_DB}.t VALUES (1, 'alpha'), (2, 'beta'), (3, 'gamma')`);
      await c.query(`CREATE TABLE ${MY_DB}.inj (v text)`);
      await c.query(`CREATE TABLE ${MY_DB}.d (n int)`);
      await c.query(
        `INSERT INTO ${MY_DB}.d WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 100) SELECT n FROM s`,
      );
    });
    t = await startTestApp({ worker: false });
    owner = (await t.bootstrap('acme')).api_key;
    const [org] = await t.rt.deps.db.select().from(organizations).where(eq(organizations.slug, 'acme'));
    orgId = org.id;
    silent = await startSilentTcpServer();
    await addDataSource('pg', 'postgres', pgConfig, { password: 'unused' });
    await addDataSource('pg-ro', 'postgres', pgConfig, { readOnly: true, password: 'unused' });
    await addDataSource('my', 'mysql', myConfig, { password: MY_PASSWORD });
    await addDataSource('my-ro', 'mysql', myConfig, { readOnly: true, password: MY_PASSWORD });
    await addDataSource(
      'pg-private',
      'postgres',
      { ...pgConfig, allow_private_hosts: false },
      { password: 'x' },
    );
    await addDataSource('gh', 'github', { owner: 'acme', repo: 'etl' });
  });

  afterAll(async () => {
    await t?.close();
    await silent?.close();
    await pgAdmin('postgres', (c) => c.query(`DROP DATABASE IF EXISTS ${PG_DB} WITH (FORCE)`));
    await myAdmin(async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${MY_DB}`);
      await c.query(`DROP USER IF EXISTS '${MY_USER}'@'127.0.0.1'`);
    });
  });

  describe('test-connection of PostgreSQL and MySQL data sources', () => {
    const testConnection = async (slug: string) => {
      const res = await call('POST', `/data-sources/${slug}/test-connection`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    };

    it('succeeds with working settings', async () => {
      for (const slug of ['pg', 'my']) {
        expect(await testConnection(slug)).toMatchObject({ data_source_slug: slug, ok: true, error: null });
      }
    });

    it('reports each failure with its code and no secret', async () => {
      const cases: [string, string, Record<string, unknown>, string][] = [
        ['my-badpw', 'mysql', myConfig, 'AUTHENTICATION_FAILED'],
        ['pg-nodb', 'postgres', { ...pgConfig, database: `nope_${suffix}` }, 'CONNECTION_FAILED'],
        ['my-nodb', 'mysql', { ...myConfig, user: 'root', database: `nope_${suffix}` }, 'CONNECTION_FAILED'],
        ['pg-refused', 'postgres', { ...pgConfig, port: await freePort() }, 'CONNECTION_FAILED'],
        ['my-refused', 'mysql', { ...myConfig, port: await freePort() }, 'CONNECTION_FAILED'],
        ['pg-nxdomain', 'postgres', { ...pgConfig, host: `nope-${suffix}.invalid` }, 'HOST_NOT_FOUND'],
        ['my-nxdomain', 'mysql', { ...myConfig, host: `nope-${suffix}.invalid` }, 'HOST_NOT_FOUND'],
        [
          'pg-localhost',
          'postgres',
          { ...pgConfig, host: 'localhost', allow_private_hosts: false },
          'PRIVATE_HOST_BLOCKED',
        ],
        ['my-loopback', 'mysql', { ...myConfig, allow_private_hosts: false }, 'PRIVATE_HOST_BLOCKED'],
        [
          'pg-hex',
          'postgres',
          { ...pgConfig, host: '0x7f000001', allow_private_hosts: false },
          'PRIVATE_HOST_BLOCKED',
        ],
        ['pg-silent', 'postgres', { ...pgConfig, port: silent.port, connect_timeout_seconds: 1 }, 'TIMEOUT'],
        ['my-silent', 'mysql', { ...myConfig, port: silent.port, connect_timeout_seconds: 1 }, 'TIMEOUT'],
      ];
      const wrong = `wrong-${randomBytes(6).toString('hex')}`;
      for (const [slug, type, config, code] of cases) {
        await addDataSource(slug, type, config, { password: slug === 'my-nodb' ? '' : wrong });
        const result = await testConnection(slug);
        expect(result.ok, slug).toBe(false);
        expect(result.error.code, `${slug}: ${result.error.message}`).toBe(code);
        const stored = (await call('GET', `/data-sources/${slug}`)).body;
        for (const text of [JSON.stringify(result), stored]) {
          expect(text).not.toContain(wrong);
          expect(text).not.toContain(MY_PASSWORD);
        }
      }
      expect(t.logs()).not.toContain(wrong);
    });
  });

  it('creates, reads, lists, changes and deletes a query', async () => {
    const created = await saveQuery('by-name', 'pg', 'SELECT id FROM t WHERE name = {{name}}');
    expect(created).toEqual({
      slug: 'by-name',
      name: 'by-name',
      description: null,
      data_source_slug: 'pg',
      statement: { type: 'sql', sql: 'SELECT id FROM t WHERE name = {{name}}' },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await call('GET', '/queries/by-name')).json()).toEqual(created);

    const generated = await call('POST', '/queries', {
      name: 'All rows',
      data_source_slug: 'my',
      statement: { type: 'sql', sql: 'SELECT * FROM t' },
      description: 'everything',
    });
    expect(generated.statusCode).toBe(201);
    expect(generated.json().slug).toBe('all-rows');

    const list = await call('GET', '/queries?sort_by=query_name&order=asc&limit=1');
    expect(list.statusCode).toBe(200);
    expect(list.json().queries.map((q: any) => q.slug)).toEqual(['all-rows']);
    expect(list.json().has_more).toBe(true);
    const next = await call(
      'GET',
      `/queries?sort_by=query_name&order=asc&limit=1&cursor=${list.json().next_cursor}`,
    );
    expect(next.json().queries.map((q: any) => q.slug)).toEqual(['by-name']);

    const patched = await call('PATCH', '/queries/all-rows', {
      name: 'Every row',
      statement: { type: 'sql', sql: 'SELECT * FROM t ORDER BY id' },
      data_source_slug: 'pg',
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({
      name: 'Every row',
      data_source_slug: 'pg',
      description: 'everything',
    });

    expect((await call('DELETE', '/queries/all-rows')).statusCode).toBe(204);
    expect((await call('GET', '/queries/all-rows')).statusCode).toBe(404);

    const events = (await call('GET', '/events?entity_type=query&entity_slug=all-rows')).json().events;
    expect(events.map((e: any) => e.action).sort()).toEqual(['create', 'delete', 'update']);
  });

  it('checks statements, data sources and slugs', async () => {
    const quoted = await call('POST', '/queries', {
      name: 'q',
      data_source_slug: 'pg',
      statement: { type: 'sql', sql: "SELECT '{{x}}'" },
    });
    expect(quoted.statusCode).toBe(400);
    expect(quoted.json().error.validation_errors[0].path).toBe('statement.sql');
    const wrongShape = await call('POST', '/queries', {
      name: 'q',
      data_source_slug: 'my',
      statement: { type: 'sql', sql: 'SELECT 1', extra: true },
    });
    expect(wrongShape.statusCode).toBe(400);
    const missing = await call('POST', '/queries', {
      name: 'q',
      data_source_slug: 'nope',
      statement: { type: 'sql', sql: 'SELECT 1' },
    });
    expect(missing.statusCode).toBe(404);
    // A statement of another kind: the GitHub connector takes its own statements.
    const otherKind = await call('POST', '/queries', {
      name: 'q',
      data_source_slug: 'gh',
      statement: { type: 'sql', sql: 'SELECT 1' },
    });
    expect(otherKind.statusCode).toBe(400);
    expect(otherKind.json().error.code).toBe('VALIDATION_FAILED');
    await saveQuery('dup', 'pg', 'SELECT 1');
    const dup = await call('POST', '/queries', {
      name: 'dup',
      slug: 'dup',
      data_source_slug: 'pg',
      statement: { type: 'sql', sql: 'SELECT 1' },
    });
    expect(dup.statusCode).toBe(409);
    const badName = await call('POST', '/queries', {
      name: '',
      data_source_slug: 'pg',
      statement: { type: 'sql', sql: 'SELECT 1' },
    });
    expect(badName.json().error.code).toBe('ENTITY_NAME_INVALID');
  });

  it('executes with bound parameters on PostgreSQL and MySQL and stores the execution', async () => {
    for (const source of ['pg', 'my']) {
      const slug = `find-${source}`;
      await saveQuery(
        slug,
        source,
        'SELECT id, name FROM t WHERE name <> {{skip}} AND id >= {{min}} ORDER BY id',
      );
      const run = await execute(slug, { skip: 'beta', min: 1 });
      expect(run).toMatchObject({
        query_slug: slug,
        status: 'succeeded',
        result_type: 'sql',
        parameter_keys: ['min', 'skip'],
        row_count: 2,
        truncated: false,
        error: null,
      });
      expect(run.result.rows).toEqual([
        [1, 'alpha'],
        [3, 'gamma'],
      ]);
      expect(run.result.columns.map((c: any) => c.name)).toEqual(['id', 'name']);
      expect(run.duration_ms).toBeGreaterThanOrEqual(0);
      expect((await call('GET', `/query-executions/${run.slug}`)).json()).toEqual(run);
      const list = (await call('GET', `/queries/${slug}/executions`)).json();
      expect(list.query_executions).toEqual([run]);
    }
  });

  it('stores a failed execution: missing parameter, blocked host', async () => {
    await saveQuery('needs-param', 'my', 'SELECT {{a}}');
    const missing = await execute('needs-param', {});
    expect(missing).toMatchObject({ status: 'failed', result: null, row_count: null });
    expect(missing.error.code).toBe('INVALID_STATEMENT');

    await saveQuery('private', 'pg-private', 'SELECT 1');
    const blocked = await execute('private');
    expect(blocked.status).toBe('failed');
    expect(blocked.error.code).toBe('PRIVATE_HOST_BLOCKED');
    const stored = (await call('GET', '/queries/private/executions')).json().query_executions;
    expect(stored.map((e: any) => e.slug)).toEqual([blocked.slug]);

    // The hosted git kinds name a blocked host the same way (their SDKs wrap the guard's error).
    for (const [type, config] of [
      ['github', { owner: 'acme', repo: 'etl', base_url: 'http://127.0.0.1:18443' }],
      ['gitlab', { project: 'acme/etl', base_url: 'http://127.0.0.1:18443' }],
    ] as const) {
      await addDataSource(`${type}-private`, type, config);
      const res = await call('POST', '/queries', {
        name: `${type} branches`,
        slug: `${type}-branches`,
        data_source_slug: `${type}-private`,
        statement: { type, operation: 'list_branches' },
      });
      expect(res.statusCode, res.body).toBe(201);
      const forge = await execute(`${type}-branches`);
      expect(forge, type).toMatchObject({ status: 'failed', error: { code: 'PRIVATE_HOST_BLOCKED' } });
    }
  });

  it('keeps SQL injection payloads inert on both kinds', async () => {
    const payloads = [
      "'; DROP TABLE t; --",
      '1 OR 1=1',
      '$1',
      '?',
      "\\'; DROP TABLE t; --",
      '\u2018 OR \u20181\u2019=\u20191',
      '{{other}}',
    ];
    for (const source of ['pg', 'my']) {
      await saveQuery(`ins-${source}`, source, 'INSERT INTO inj (v) VALUES ({{v}})');
      await saveQuery(
        `count-${source}`,
        source,
        'SELECT count(*) FROM t WHERE name = {{v}} OR id = {{other}}',
      );
      for (const v of payloads) {
        expect((await execute(`ins-${source}`, { v, other: 'x' })).status).toBe('succeeded');
        const counted = await execute(`count-${source}`, { v, other: -1 });
        expect(counted.status, JSON.stringify(counted.error)).toBe('succeeded');
        expect(counted.result.rows).toEqual([['0']]);
      }
    }
    await pgAdmin(PG_DB, async (c) => {
      expect((await c.query('SELECT count(*)::int AS n FROM t')).rows[0].n).toBe(3);
      expect((await c.query('SELECT v FROM inj')).rows.map((r) => r.v).sort()).toEqual([...payloads].sort());
    });
    await myAdmin(async (c) => {
      const [n] = await c.query<any[]>(`SELECT count(*) AS n FROM ${MY_DB}.t`);
      expect(Number(n[0].n)).toBe(3);
      const [rows] = await c.query<any[]>(`SELECT v FROM ${MY_DB}.inj`);
      expect(rows.map((r) => r.v).sort()).toEqual([...payloads].sort());
    });
  });

  it('truncates at the row limit', async () => {
    await saveQuery('many-pg', 'pg', 'SELECT g FROM generate_series(1, 50000) g');
    await saveQuery('many-my', 'my', 'SELECT a.n, b.n, c.n FROM d a, d b, d c');
    for (const slug of ['many-pg', 'many-my']) {
      const run = await execute(slug);
      expect(run).toMatchObject({ status: 'succeeded', row_count: 1000, truncated: true });
      expect(run.result.rows).toHaveLength(1000);
    }
  });

  it('cannot write through a read-only data source', async () => {
    for (const source of ['pg-ro', 'my-ro']) {
      await saveQuery(`write-${source}`, source, "INSERT INTO t VALUES (99, 'x')");
      await saveQuery(`drop-${source}`, source, 'DROP TABLE t');
      for (const slug of [`write-${source}`, `drop-${source}`]) {
        const run = await execute(slug);
        expect(run.status).toBe('failed');
        expect(run.error.code).toBe('PERMISSION_DENIED');
      }
      await saveQuery(`read-${source}`, source, 'SELECT count(*) FROM t');
      expect((await execute(`read-${source}`)).result.rows).toEqual([['3']]);
    }
  });

  it('never stores or logs parameter values', async () => {
    const canary = `canary-${randomBytes(6).toString('hex')}`;
    await saveQuery('secretive', 'pg', 'SELECT count(*) FROM t WHERE name = {{token_value}}');
    await saveQuery('secretive-fail', 'my', 'SELECT * FROM t WHERE {{token_value}} = no_such_column');
    const ok = await execute('secretive', { token_value: canary });
    const failed = await execute('secretive-fail', { token_value: canary });
    expect(ok.status).toBe('succeeded');
    expect(failed.status).toBe('failed');
    expect(ok.parameter_keys).toEqual(['token_value']);
    const seen = [
      JSON.stringify(ok),
      JSON.stringify(failed),
      (await call('GET', '/queries/secretive/executions')).body,
      (await call('GET', '/events?entity_type=query_execution')).body,
      JSON.stringify((await t.rt.deps.store.executeSql('SELECT * FROM query_executions')).rows),
      JSON.stringify((await t.rt.deps.store.executeSql('SELECT * FROM events')).rows),
      t.logs(),
    ];
    for (const text of seen) expect(text).not.toContain(canary);
    const events = (await call('GET', `/events?entity_type=query_execution&entity_slug=${ok.slug}`)).json()
      .events;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'execute',
      metadata: { query_slug: 'secretive', parameter_names: ['token_value'], status: 'succeeded' },
    });
  });

  it('refuses a stored statement the connector does not accept, validates the body and checks permissions', async () => {
    // A query whose statement no longer fits its connector cannot be created through the API; insert one.
    const [gh] = await t.rt.deps.db.select().from(dataSources).where(eq(dataSources.slug, 'gh'));
    await t.rt.deps.db
      .insert(queries)
      .values({ organizationId: orgId, slug: 'gh-q', name: 'gh', dataSourceId: gh.id, statement: {} });
    // A stored statement the connector no longer accepts is refused, never a 500.
    const res = await call('POST', '/queries/gh-q:execute', { parameters: {} });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toMatchObject({
      code: 'VALIDATION_FAILED',
      message: 'the statement is not valid for a GitHub data source',
    });

    await addDataSource('pg-off', 'postgres', pgConfig, { password: 'unused' });
    await saveQuery('inactive', 'pg-off', 'SELECT 1');
    expect((await call('PATCH', '/data-sources/pg-off', { is_active: false })).statusCode).toBe(200);
    const off = await call('POST', '/queries/inactive:execute', { parameters: {} });
    expect(off.statusCode).toBe(409);
    expect((await call('GET', '/queries/inactive/executions')).json().query_executions).toEqual([]);

    await saveQuery('perm', 'pg', 'SELECT 1');
    expect((await call('POST', '/queries/perm:execute', { parameters: {}, extra: 1 })).statusCode).toBe(400);
    expect((await call('POST', '/queries/perm:execute', {})).statusCode).toBe(400);
    expect((await call('POST', '/queries/missing:execute', { parameters: {} })).statusCode).toBe(404);

    const key = await call('POST', '/api-keys', { name: 'viewer', role: 'viewer' });
    expect(key.statusCode, key.body).toBe(201);
    const viewer: string = key.json().token;
    expect((await call('GET', '/queries/perm', undefined, viewer)).statusCode).toBe(200);
    expect((await call('POST', '/queries/perm:execute', { parameters: {} }, viewer)).statusCode).toBe(403);
    expect((await t.call('GET', '/organizations/other/queries/perm', { token: owner })).statusCode).toBe(404);
  });
});
