import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeys, invitations, members, roles } from '../../packages/server/src/db/schema/index';
import type { RouteInfo } from '../../packages/server/src/http/route-table';
import { recordEvent } from '../../packages/server/src/modules/events/events.record';
import type { BootstrapResult } from '../../packages/server/src/modules/system/bootstrap';
import { startTestApp, type TestApp } from '../support/app';
import {
  bodyFor,
  fillUrl,
  insertApiKey,
  insertOrg,
  manyCallsEnv,
  orgRoutes,
  paramsOf,
  printServerErrors,
  type SeededOrg,
  sqlRows,
  tableExists,
  withoutRequestId,
} from './support';

// The vitest projects do not inherit the root timeouts, and these suites make many calls.
const slow = { timeout: 300_000 };

// Org A's credentials must not reach anything of org B through any route, and what they get back
// must not tell B's existence apart from an organization that does not exist.

describe('tenant isolation', slow, () => {
  let t: TestApp;
  let a: BootstrapResult;
  let b: SeededOrg;
  const seeded: Record<string, string> = {};
  let bEvents = 0;
  const eventCount = async (orgId: string) =>
    Number(
      (await sqlRows(t, 'select count(*)::int as n from events where organization_id = $1', [orgId]))[0].n,
    );

  /** Which seeded resource of B a path parameter names; the first matching pattern wins. */
  const paramKinds: [RegExp, string][] = [
    [/^organization$/, 'organization'],
    [/^notification_slug$/, 'notification'],
    [/^alert_destination_slug$/, 'alert_destination'],
    [/^alert_policy_slug$/, 'alert_policy'],
    [/api_key/, 'api_key'],
    [/pat|personal_access_token/, 'pat'],
    [/invitation/, 'invitation'],
    [/role/, 'role'],
    [/user|member/, 'user'],
    [/secret/, 'secret'],
    [/variable/, 'variable'],
    [/execution/, 'query_execution'],
    [/query/, 'query'],
    [/data_source/, 'data_source'],
    [/pipeline_trigger/, 'pipeline_trigger'],
    [/^pipeline$/, 'pipeline'],
    [/environment/, 'environment'],
    [/project/, 'project'],
    [/event/, 'event'],
  ];

  /** The slug of B's seeded resource for a path parameter, or one that exists nowhere. */
  function slugFor(param: string): string {
    const kind = paramKinds.find(([re]) => re.test(param))?.[1];
    return (kind && seeded[kind]) || 'does-not-exist';
  }

  beforeAll(async () => {
    t = await startTestApp({ env: manyCallsEnv });
    a = await t.bootstrap('org-a', 'owner@org-a.example');
    b = await insertOrg(t, 'org-b');
    seeded.organization = b.orgSlug;
    const db = t.rt.deps.db;
    const extra = await insertApiKey(t, b.orgId, { slug: 'b-key', role: 'viewer' });
    seeded.api_key = extra.slug;
    seeded.pat = b.patSlug;
    seeded.user = b.userSlug;
    await db.insert(roles).values({
      organizationId: b.orgId,
      slug: 'b-role',
      name: 'B role',
      permissions: ['organizations.read'],
    });
    seeded.role = 'b-role';
    await db.insert(invitations).values({
      organizationId: b.orgId,
      slug: 'b-invitation',
      email: 'someone@elsewhere.example',
      role: 'viewer',
      invitedByUserId: b.userId,
      expiresAt: new Date(Date.now() + 7 * 86400_000),
    });
    seeded.invitation = 'b-invitation';
    await recordEvent(
      db,
      { organizationId: b.orgId, actor: { type: 'user', slug: b.userSlug }, requestId: null },
      { entityType: 'api_key', entitySlug: 'b-key', action: 'create', security: true },
    );
    const [ev] = await sqlRows(t, 'select slug from events where organization_id = $1 limit 1', [b.orgId]);
    seeded.event = ev?.slug ?? 'does-not-exist';
    await seedConnections(b.orgId);
    bEvents = await eventCount(b.orgId);
  }, slow.timeout);
  afterAll(async () => {
    printServerErrors(t);
    await t?.close();
  }, slow.timeout);

  /** Projects, environments and what hangs off them, for the tables that exist in this build. */
  async function seedConnections(orgId: string) {
    const insert = async (table: string, kind: string | null, cols: Record<string, unknown>) => {
      if (!(await tableExists(t, table))) return null;
      const names = Object.keys(cols);
      const [row] = await sqlRows(
        t,
        `insert into ${table} (${names.join(', ')}) values (${names.map((_, i) => `$${i + 1}`).join(', ')}) returning id`,
        Object.values(cols),
      );
      if (kind) seeded[kind] = String(cols.slug ?? cols.key);
      return row.id as string;
    };
    const org = { organization_id: orgId };
    const project = await insert('projects', 'project', { ...org, slug: 'b-project', name: 'B project' });
    const env = await insert('environments', 'environment', { ...org, slug: 'b-env', name: 'B env' });
    if (project && env) {
      await insert('project_environments', null, {
        project_id: project,
        environment_id: env,
        is_default: true,
      });
      await insert('runtime_variables', 'variable', {
        ...org,
        environment_id: env,
        key: 'B_VAR',
        value: 'b',
      });
      await insert('environment_secrets', 'secret', {
        ...org,
        environment_id: env,
        key: 'B_SECRET',
        kid: 'none',
        ciphertext: 'not-decryptable',
      });
      const pipeline = await insert('pipelines', 'pipeline', {
        ...org,
        project_id: project,
        slug: 'b-pipeline',
        name: 'B pipeline',
      });
      if (pipeline) {
        await insert('pipeline_triggers', 'pipeline_trigger', {
          ...org,
          pipeline_id: pipeline,
          environment_id: env,
          slug: 'b-trigger',
          name: 'B trigger',
          kind: 'webhook',
          input_mapping: '{}',
        });
      }
    }
    const destination = await insert('alert_destinations', 'alert_destination', {
      ...org,
      slug: 'b-destination',
      name: 'B destination',
      type: 'email',
      non_secret_config: JSON.stringify({ recipients: ['b@b.example'] }),
    });
    const policy = await insert('alert_policies', 'alert_policy', {
      ...org,
      slug: 'b-policy',
      name: 'B policy',
      scope: 'organization',
    });
    if (destination && policy) {
      await sqlRows(
        t,
        'insert into alert_policy_destinations (policy_id, destination_id, position) values ($1, $2, 0)',
        [policy, destination],
      );
    }
    await insert('notifications', 'notification', {
      ...org,
      slug: 'b-notification',
      dedup_key: 'pipeline_run_failed:b-project/b-env:pipeline:b-pipeline',
      notification_type: 'pipeline_run_failed',
      severity: 'error',
      lifecycle_state: 'open',
      title: 'B failed',
      summary: 'B failed',
      source_kind: 'pipeline_run',
      source_action: 'update',
      first_seen_at: new Date().toISOString(),
      last_seen_at: new Date().toISOString(),
    });
    const source = await insert('data_sources', 'data_source', {
      ...org,
      slug: 'b-source',
      name: 'B source',
      type: 'http',
      config: JSON.stringify({ base_url: 'https://b.example' }),
    });
    if (source) {
      const query = await insert('queries', 'query', {
        ...org,
        slug: 'b-query',
        name: 'B query',
        data_source_id: source,
        statement: JSON.stringify({ method: 'GET', path: '/' }),
      });
      if (query) {
        await insert('query_executions', 'query_execution', {
          ...org,
          query_id: query,
          slug: 'b-execution',
          status: 'succeeded',
          result_type: 'rows',
        });
      }
    }
  }

  async function expectHidden(r: RouteInfo, token: string, who: string) {
    const url = fillUrl(r.url, slugFor);
    const res = await t.call(r.method, url, { token, body: bodyFor(r.method) });
    const ctx = `${who} → ${r.method} ${url}: ${res.statusCode} ${res.body}`;
    expect(res.statusCode, ctx).toBe(404);
    expect(res.json().error?.code, ctx).toBe('NOT_FOUND');
    const nowhere = await t.call(
      r.method,
      fillUrl(r.url, (p) => (p === 'organization' ? 'no-such-org' : slugFor(p))),
      { token, body: bodyFor(r.method) },
    );
    expect(nowhere.statusCode, `${ctx} vs no-such-org`).toBe(res.statusCode);
    expect(withoutRequestId(nowhere), `${ctx} vs no-such-org`).toEqual(withoutRequestId(res));
  }

  it("every organization route answers org B to org A's owner exactly like a missing org", async () => {
    const routes = orgRoutes(t.app.routeTable);
    expect(routes.length).toBeGreaterThan(0);
    let covered = 0;
    for (const r of routes) {
      await expectHidden(r, a.api_key, "A's owner API key");
      await expectHidden(r, a.personal_access_token, "A's owner PAT");
      covered++;
    }
    expect(covered).toBe(routes.length);
  });

  it("routes outside /organizations/ do not reach another user's resources", async () => {
    // Every authenticated route with a path parameter, called by A's owner with B's slugs.
    const routes = t.app.routeTable.filter(
      (r) => !r.url.includes(':organization') && r.access?.kind === 'principal' && paramsOf(r.url).length > 0,
    );
    for (const r of routes) {
      const url = fillUrl(r.url, slugFor);
      const res = await t.call(r.method, url, { token: a.personal_access_token, body: bodyFor(r.method) });
      const ctx = `${r.method} ${url}: ${res.statusCode} ${res.body}`;
      expect(res.statusCode, ctx).toBe(404);
      expect(res.json().error?.code, ctx).toBe('NOT_FOUND');
      const missing = await t.call(
        r.method,
        fillUrl(r.url, () => 'does-not-exist'),
        {
          token: a.personal_access_token,
          body: bodyFor(r.method),
        },
      );
      expect(missing.statusCode, ctx).toBe(404);
      expect(withoutRequestId(missing), ctx).toEqual(withoutRequestId(res));
    }
    // Spelled out for the two the foundation defines, once their routes exist.
    const has = (m: string, re: RegExp) => t.app.routeTable.some((r) => r.method === m && re.test(r.url));
    if (has('GET', /^\/users\/me\/personal-access-tokens\/:/)) {
      const res = await t.call('GET', `/users/me/personal-access-tokens/${b.patSlug}`, {
        token: a.personal_access_token,
      });
      expect(res.statusCode).toBe(404);
    }
    if (has('POST', /^\/invitations\/.*accept$/)) {
      const res = await t.call('POST', '/invitations/b-invitation:accept', {
        token: a.personal_access_token,
      });
      expect(res.statusCode, res.body).toBe(404);
      const ms = await t.rt.deps.db.select().from(members).where(eq(members.organizationId, b.orgId));
      expect(ms).toHaveLength(1);
    }
  });

  it("B's resources survived every call untouched (runs last)", async () => {
    const db = t.rt.deps.db;
    const keys = await db.select().from(apiKeys).where(eq(apiKeys.organizationId, b.orgId));
    expect(keys.map((k) => k.slug).sort()).toEqual(['b-key', b.apiKeySlug].sort());
    expect(keys.every((k) => k.revokedAt === null)).toBe(true);
    const [role] = await db
      .select()
      .from(roles)
      .where(and(eq(roles.organizationId, b.orgId), eq(roles.slug, 'b-role')));
    expect(role?.permissions).toEqual(['organizations.read']);
    const [inv] = await db.select().from(invitations).where(eq(invitations.slug, 'b-invitation'));
    expect(inv?.status).toBe('pending');
    const ms = await db.select().from(members).where(eq(members.organizationId, b.orgId));
    expect(ms.map((m) => m.role)).toEqual(['owner']);
    // Nothing A tried left a trace in B's logs either: A is not B's business, nor B's audit's.
    expect(await eventCount(b.orgId)).toBe(bEvents);
    for (const [table, kind] of [
      ['projects', 'project'],
      ['environments', 'environment'],
      ['data_sources', 'data_source'],
      ['queries', 'query'],
      ['alert_destinations', 'alert_destination'],
      ['alert_policies', 'alert_policy'],
      ['notifications', 'notification'],
      ['pipelines', 'pipeline'],
      ['pipeline_triggers', 'pipeline_trigger'],
    ]) {
      if (!seeded[kind]) continue;
      const rows = await sqlRows(t, `select * from ${table} where organization_id = $1`, [b.orgId]);
      expect(
        rows.map((r) => r.slug),
        table,
      ).toEqual([seeded[kind]]);
      expect(rows[0].deleted_at ?? null, table).toBeNull();
    }
    for (const [table, kind] of [
      ['runtime_variables', 'variable'],
      ['environment_secrets', 'secret'],
    ]) {
      if (!seeded[kind]) continue;
      const rows = await sqlRows(t, `select * from ${table} where organization_id = $1`, [b.orgId]);
      expect(
        rows.map((r) => r.key),
        table,
      ).toEqual([seeded[kind]]);
    }
    // B's own owner still reaches B (so the 404s above were about A, not a broken org).
    const own = t.app.routeTable.find(
      (r) => r.method === 'GET' && r.url === '/organizations/:organization/api-keys',
    );
    expect(own).toBeTruthy();
    const res = await t.call('GET', '/organizations/org-b/api-keys', { token: b.apiKey });
    expect(res.statusCode).toBe(200);
  });
});
