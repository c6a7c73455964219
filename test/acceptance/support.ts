import { hash as argon2 } from '@node-rs/argon2';
import type { Response as InjectResponse } from 'light-my-request';
import { expect } from 'vitest';
import {
  apiKeys,
  members,
  organizations,
  personalAccessTokens,
  users,
} from '../../packages/server/src/db/schema/index';
import type { RouteInfo } from '../../packages/server/src/http/route-table';
import { issueToken } from '../../packages/server/src/http/tokens';
import type { TestApp } from '../support/app';

// Shared by the cross-cutting acceptance suites: they seed through the store directly so they do
// not depend on the routes they are checking, and they read the registered route table so a
// module added later is covered without editing them.

/** Generous enough for suites that make thousands of calls with one token. */
export const manyCallsEnv = { SLUICE_RATE_LIMIT_PER_TOKEN: '1000000' };

export type SeededOrg = {
  orgId: string;
  orgSlug: string;
  userId: string;
  userSlug: string;
  email: string;
  apiKeySlug: string;
  apiKey: string;
  patSlug: string;
  pat: string;
};

/** An organization with an owner user (member), an owner API key and a PAT, inserted directly. */
export async function insertOrg(
  t: TestApp,
  slug: string,
  opts: { password?: string } = {},
): Promise<SeededOrg> {
  const db = t.rt.deps.db;
  const email = `owner@${slug}.example`;
  const passwordHash = await argon2(opts.password ?? `pw-${slug}-not-used`, { algorithm: 2 });
  const [user] = await db
    .insert(users)
    .values({
      slug: `${slug}-owner`,
      email,
      name: `${slug} owner`,
      passwordHash,
      emailVerifiedAt: new Date(),
    })
    .returning();
  const [org] = await db.insert(organizations).values({ slug, name: slug }).returning();
  await db.insert(members).values({ organizationId: org.id, userId: user.id, role: 'owner' });
  const key = await insertApiKey(t, org.id, {
    slug: `${slug}-owner-key`,
    role: 'owner',
    canManageApiKeys: true,
  });
  const pat = await insertPat(t, user.id, `${slug}-pat`);
  return {
    orgId: org.id,
    orgSlug: slug,
    userId: user.id,
    userSlug: user.slug,
    email,
    apiKeySlug: key.slug,
    apiKey: key.token,
    patSlug: pat.slug,
    pat: pat.token,
  };
}

export async function insertApiKey(
  t: TestApp,
  organizationId: string,
  o: {
    slug: string;
    role: string;
    canManageApiKeys?: boolean;
    name?: string;
    createdAt?: Date;
    updatedAt?: Date;
    expiresAt?: Date | null;
  },
): Promise<{ slug: string; token: string; hash: string }> {
  const issued = issueToken('key');
  await t.rt.deps.db.insert(apiKeys).values({
    organizationId,
    slug: o.slug,
    name: o.name ?? o.slug,
    tokenPrefix: issued.prefix,
    tokenHash: issued.hash,
    role: o.role,
    canManageApiKeys: o.canManageApiKeys ?? false,
    expiresAt: o.expiresAt ?? null,
    ...(o.createdAt ? { createdAt: o.createdAt } : {}),
    ...(o.updatedAt ? { updatedAt: o.updatedAt } : {}),
  });
  return { slug: o.slug, token: issued.token, hash: issued.hash };
}

export async function insertPat(t: TestApp, userId: string, slug: string) {
  const issued = issueToken('pat');
  await t.rt.deps.db.insert(personalAccessTokens).values({
    userId,
    slug,
    name: slug,
    tokenPrefix: issued.prefix,
    tokenHash: issued.hash,
  });
  return { slug, token: issued.token, hash: issued.hash };
}

/** A user who is a member of the organization with the given role, and a PAT of theirs. */
export async function insertMember(t: TestApp, organizationId: string, slug: string, role: string) {
  const db = t.rt.deps.db;
  const [user] = await db
    .insert(users)
    .values({
      slug,
      email: `${slug}@members.example`,
      name: slug,
      passwordHash: 'not-a-real-hash',
      emailVerifiedAt: new Date(),
    })
    .returning();
  await db.insert(members).values({ organizationId, userId: user.id, role });
  const pat = await insertPat(t, user.id, `${slug}-pat`);
  return { userId: user.id, userSlug: slug, email: user.email, pat: pat.token };
}

export async function sqlRows(t: TestApp, text: string, values?: unknown[]): Promise<any[]> {
  return (await t.rt.deps.store.executeSql(text, values)).rows;
}

export async function tableExists(t: TestApp, name: string): Promise<boolean> {
  const rows = await sqlRows(
    t,
    `select 1 from information_schema.tables where table_schema = 'public' and table_name = $1`,
    [name],
  );
  return rows.length > 0;
}

/** Every row of every table of the application and the queue, as JSON text. */
export async function dumpDatabase(t: TestApp): Promise<string> {
  const tables = await sqlRows(
    t,
    `select table_schema, table_name from information_schema.tables
      where table_schema in ('public', 'pgboss') and table_type = 'BASE TABLE'
      order by 1, 2`,
    [],
  );
  expect(tables.length).toBeGreaterThan(5);
  const parts: string[] = [];
  for (const { table_schema, table_name } of tables) {
    const rows = await sqlRows(
      t,
      `select row_to_json(x)::text as j from "${table_schema}"."${table_name}" x`,
      [],
    );
    for (const r of rows) parts.push(`${table_schema}.${table_name} ${r.j}`);
  }
  return parts.join('\n');
}

/** A response body without its request id, to compare two error responses. */
export function withoutRequestId(res: InjectResponse): unknown {
  const body = res.json();
  if (body?.error && typeof body.error === 'object') {
    const { request_id: _ignored, ...rest } = body.error;
    return { ...body, error: rest };
  }
  return body;
}

/** The parameter names of a route URL, in order (`:organization`, `:api_key_slug(re)::rotate` …). */
export function paramsOf(url: string): string[] {
  return [...url.replace(/::/g, '').matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
}

/** A concrete path for a route URL: each parameter replaced, `::` turned into a literal colon. */
export function fillUrl(url: string, values: (param: string) => string): string {
  let out = '';
  for (let i = 0; i < url.length; i++) {
    const c = url[i];
    if (c !== ':') {
      out += c;
      continue;
    }
    if (url[i + 1] === ':') {
      out += ':';
      i++;
      continue;
    }
    let j = i + 1;
    while (j < url.length && /[A-Za-z0-9_]/.test(url[j])) j++;
    const name = url.slice(i + 1, j);
    if (url[j] === '(') j = url.indexOf(')', j) + 1;
    out += encodeURIComponent(values(name));
    i = j - 1;
  }
  return out;
}

export function orgRoutes(table: RouteInfo[]): RouteInfo[] {
  return table.filter((r) => r.url.includes(':organization'));
}

export function label(r: RouteInfo) {
  return `${r.method} ${r.url}`;
}

/** A body for a request of this method: `{}` where a body is expected. */
export function bodyFor(method: string): unknown {
  return method === 'GET' || method === 'DELETE' ? undefined : {};
}

/** Prints the server's logged 5xx errors, so a failing run shows their cause and not just a 500. */
export function printServerErrors(t: TestApp | undefined) {
  const lines = (t?.logs() ?? '').split('\n').filter((l) => /"level":50/.test(l));
  if (lines.length > 0) console.error(`server errors:\n${lines.join('\n')}`);
}
