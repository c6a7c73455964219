import { eq } from 'drizzle-orm';
import { createGenerator } from 'json-schema-faker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organizations } from '../packages/server/src/db/schema/index';
import { SLUG_PATTERN } from '../packages/server/src/http/fields';
import { insertApiKey } from './acceptance/support';
import { startTestApp, type TestApp } from './support/app';
import { conformance, type DocOperation, documentOperations, generatable } from './support/conformance';

// Generated traffic through every operation of the served document, answered only as the
// document says: each answer's status is listed for its operation, its headers are declared and
// its body validates against that status's schema (test/support/conformance.ts). Per operation:
// no token, a viewer key (a role too weak for most), the owner with a body generated from the
// operation's own schema, the owner with each slug parameter malformed and then well-formed but
// unknown, a body the schema refuses, JSON that does not parse, a body that is not JSON and a
// body over the size limit. Operations join from the document, so a new route is covered
// without touching this file.

const SEED = Number(process.env.SLUICE_FUZZ_SEED ?? 20261128);
const BODY_LIMIT = 64 * 1024;
const slow = { timeout: 300_000 };

type Operation = DocOperation;

/** Ends the caller's account or organization: run after everything else. */
const isTerminal = (op: Operation) =>
  op.method === 'DELETE' && (op.path === '/organizations/{organization}' || op.path.startsWith('/users/me'));

function operationsOf(doc: any): Operation[] {
  const ops = documentOperations(doc);
  const rank = (op: Operation) => (isTerminal(op) ? 2 : op.method === 'DELETE' ? 1 : 0);
  return ops.sort((a, b) => rank(a) - rank(b));
}

describe('every operation answers only what the OpenAPI document says', () => {
  let t: TestApp;
  let doc: any;
  let owner: string;
  let viewer: string;
  const known: Record<string, string> = {};
  beforeAll(async () => {
    t = await startTestApp({
      env: {
        SLUICE_LOG_LEVEL: 'fatal',
        SLUICE_RATE_LIMIT_PER_TOKEN: '1000000',
        SLUICE_RATE_LIMIT_PUBLIC: '1000000',
        SLUICE_BODY_LIMIT_BYTES: String(BODY_LIMIT),
      },
    });
    const boot = await t.bootstrap('acme');
    owner = boot.personal_access_token;
    const [org] = await t.rt.deps.db.select().from(organizations).where(eq(organizations.slug, 'acme'));
    viewer = (await insertApiKey(t, org.id, { slug: 'viewer-key', role: 'viewer' })).token;
    // Path values that name something real, so some requests get past the lookups (a key of its
    // own: the owner's `:revoke` and `:rotate` must not end the viewer's).
    await insertApiKey(t, org.id, { slug: 'target-key', role: 'developer' });
    Object.assign(known, {
      organization: 'acme',
      api_key_slug: 'target-key',
      user_slug: boot.user_slug,
      role_slug: 'viewer',
    });
    doc = (await t.call('GET', '/openapi.json')).json();
  }, 120_000);
  afterAll(() => t?.close());

  it('answers generated requests with documented statuses, headers and bodies only', slow, async () => {
    const ops = operationsOf(doc);
    expect(ops.length).toBeGreaterThan(100);
    const check = conformance(doc);
    const gen = createGenerator({ seed: SEED, maxDepth: 4, maxDefaultItems: 2, optionalsProbability: 0.7 });
    const generate = async (schema: any) => {
      try {
        return await gen.generate(generatable(schema));
      } catch {
        return {};
      }
    };
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let sent = 0;

    type Request = {
      params?: Record<string, string>;
      token?: string | null;
      body?: string;
      contentType?: string;
    };
    async function send(op: Operation, r: Request) {
      let url = op.path;
      const query: string[] = [];
      for (const p of op.params) {
        if (p.in === 'path') {
          const v =
            r.params?.[p.name] ?? known[p.name] ?? String(await generate(p.schema ?? { type: 'string' }));
          url = url.replace(`{${p.name}}`, encodeURIComponent(v || 'x'));
        } else if (p.in === 'query' && p.required) {
          const v = await generate(p.schema ?? { type: 'string' });
          query.push(
            `${encodeURIComponent(p.name)}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`,
          );
        }
      }
      if (query.length > 0) url += `?${query.join('&')}`;
      const headers: Record<string, string> = {};
      const token = r.token === undefined ? owner : r.token;
      if (token) headers.authorization = `Bearer ${token}`;
      if (r.body !== undefined) headers['content-type'] = r.contentType ?? 'application/json';
      sent++;
      await new Promise((resolve) => setImmediate(resolve));
      const res = await t.app.inject({ method: op.method as any, url, headers, payload: r.body });
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      if (res.statusCode >= 500)
        failures.push(`${res.statusCode} ${op.method} ${url}: ${res.body.slice(0, 300)}`);
      failures.push(
        ...check.check(op.method, op.path, res).map((f) => `${f} [${op.method} ${url.slice(0, 160)}]`),
      );
      return res;
    }

    for (const op of ops) {
      const body = op.body ? JSON.stringify(await generate(op.body)) : undefined;
      const isPublic = op.security.length === 0;
      await send(op, { token: null, body });
      if (!isPublic) await send(op, { token: viewer, body });
      await send(op, { body });
      const slugParams = op.params.filter(
        (p) => p.in === 'path' && p.schema?.pattern === SLUG_PATTERN.source,
      );
      for (const p of slugParams) {
        // A malformed slug is 400 on every operation, colon actions included (not 405).
        const res = await send(op, { params: { [p.name]: 'BAD_Slug!' }, body });
        // (A generated body over the size limit is refused first, 413, before any parameter.)
        if (!isPublic && res.statusCode !== 400 && (body ?? '').length < BODY_LIMIT)
          failures.push(`${op.method} ${op.path}: malformed ${p.name} answered ${res.statusCode}, not 400`);
        await send(op, { params: { [p.name]: 'no-such-thing-4f2a' }, body });
      }
      if (op.body) {
        // `requestBody.required` says whether the server takes the request without one.
        const bare = await send(op, {});
        const refused =
          bare.statusCode === 400 &&
          (bare.json().error.validation_errors ?? []).some((e: any) => e.path === '(root)');
        if (op.bodyRequired && bare.statusCode < 300)
          failures.push(`${op.method} ${op.path}: body marked required, but none was accepted`);
        if (!op.bodyRequired && refused)
          failures.push(`${op.method} ${op.path}: body marked optional, but none was refused: ${bare.body}`);
      }
      if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(op.method)) {
        await send(op, { body: '{"no_such_field_4f2a": [1, {"x": null}]}' });
        await send(op, { body: '{"unterminated": ' });
        await send(op, { body: 'name=x', contentType: 'application/x-www-form-urlencoded' });
        await send(op, { body: JSON.stringify({ pad: 'x'.repeat(BODY_LIMIT) }) });
      }
    }

    expect(failures, failures.slice(0, 30).join('\n')).toEqual([]);
    expect(statuses.get(500) ?? 0).toBe(0);
    // The traffic reached handlers, not only the validators.
    const ok = [...statuses].filter(([s]) => s < 300).reduce((n, [, c]) => n + c, 0);
    expect(ok).toBeGreaterThan(20);
    for (const s of [400, 401, 403, 404, 413, 415])
      expect(statuses.get(s) ?? 0, `status ${s}`).toBeGreaterThan(0);
    expect(check.seen.size).toBe(ops.length);
    expect(sent).toBeGreaterThan(ops.length * 5);
  });

  it('documents the 429 of the rate limit with its headers', slow, async () => {
    const limited = await startTestApp({
      env: { SLUICE_LOG_LEVEL: 'fatal', SLUICE_RATE_LIMIT_PER_TOKEN: '2', SLUICE_RATE_LIMIT_PUBLIC: '2' },
    });
    try {
      const token = (await limited.bootstrap('acme')).personal_access_token;
      const check = conformance(doc);
      const failures: string[] = [];
      const seen = new Set<number>();
      for (let i = 0; i < 4; i++) {
        const res = await limited.call('GET', '/organizations/acme/projects', { token });
        seen.add(res.statusCode);
        failures.push(...check.check('GET', '/organizations/{organization}/projects', res));
      }
      expect(seen).toContain(429);
      expect(failures).toEqual([]);
    } finally {
      await limited.close();
    }
  });
});
