import { eq } from 'drizzle-orm';
import type { Response as InjectResponse } from 'light-my-request';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiKeys,
  organizations,
  personalAccessTokens,
  users,
} from '../../packages/server/src/db/schema/index';
import { hashToken, issueToken } from '../../packages/server/src/http/tokens';
import type { BootstrapResult } from '../../packages/server/src/modules/system/bootstrap';
import { startTestApp, type TestApp } from '../support/app';
import {
  dumpDatabase,
  insertApiKey,
  insertPat,
  manyCallsEnv,
  printServerErrors,
  withoutRequestId,
} from './support';

// The vitest projects do not inherit the root timeouts, and these suites make many calls.
const slow = { timeout: 300_000 };

// Raw tokens exist in exactly one place: the response that minted them. Everything the service
// keeps or prints holds the sha256 hash at most, and every unusable token fails the same way.

/** Assert a secret is absent from a text, also as its part after the stored 12-character prefix. */
function expectAbsent(haystack: string, token: string, where: string) {
  expect(haystack.includes(token), `${where} holds a raw token`).toBe(false);
  expect(haystack.includes(token.slice(12)), `${where} holds the secret part of a token`).toBe(false);
}

describe('tokens', slow, () => {
  let t: TestApp;
  let boot: BootstrapResult;
  let orgId: string;
  const keys = '/organizations/acme/api-keys';
  const hasRoute = (method: string, url: string) =>
    t.app.routeTable.some((r) => r.method === method && r.url === url);

  beforeAll(async () => {
    t = await startTestApp({ env: manyCallsEnv });
    boot = await t.bootstrap('acme');
    const [org] = await t.rt.deps.db.select().from(organizations).where(eq(organizations.slug, 'acme'));
    orgId = org.id;
  }, slow.timeout);
  afterAll(async () => {
    printServerErrors(t);
    await t?.close();
  }, slow.timeout);

  it('shows a raw API key or PAT only in the response that created or rotated it', async () => {
    const responses: { res: InjectResponse; minted?: string }[] = [];
    const created = await t.call('POST', keys, {
      token: boot.api_key,
      body: { name: 'Deployer', role: 'admin' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const first: string = created.json().token;
    responses.push({ res: created, minted: first });
    for (let i = 0; i < 5; i++) {
      const res = await t.call('GET', keys, { token: first });
      expect(res.statusCode).toBe(200);
      responses.push({ res });
    }
    const rotated = await t.call('POST', `${keys}/deployer:rotate`, { token: boot.api_key });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const second: string = rotated.json().token;
    expect(second).not.toBe(first);
    responses.push({ res: rotated, minted: second });
    for (let i = 0; i < 5; i++) {
      responses.push({ res: await t.call('GET', keys, { token: second }) });
      responses.push({ res: await t.call('GET', `${keys}/deployer`, { token: second }) });
    }
    responses.push({ res: await t.call('POST', `${keys}/deployer:revoke`, { token: boot.api_key }) });
    responses.push({ res: await t.call('GET', keys, { token: first }) });
    responses.push({ res: await t.call('GET', keys, { token: second }) });
    const tokens = [first, second];

    // A PAT goes through the same, when its routes exist.
    if (hasRoute('POST', '/users/me/personal-access-tokens')) {
      const pat = await t.call('POST', '/users/me/personal-access-tokens', {
        token: boot.personal_access_token,
        body: { name: 'laptop' },
      });
      expect(pat.statusCode, pat.body).toBe(201);
      const raw: string = pat.json().token;
      expect(raw).toMatch(/^slc_pat_/);
      tokens.push(raw);
      responses.push({ res: pat, minted: raw });
      for (let i = 0; i < 3; i++) {
        const list = await t.call('GET', '/users/me/personal-access-tokens', { token: raw });
        expect(list.statusCode).toBe(200);
        responses.push({ res: list });
        const slug = pat.json().slug;
        if (hasRoute('GET', '/users/me/personal-access-tokens/:pat_slug')) {
          responses.push({
            res: await t.call('GET', `/users/me/personal-access-tokens/${slug}`, { token: raw }),
          });
        }
      }
    }

    for (const { res, minted } of responses) {
      for (const token of tokens) {
        if (token === minted) {
          expect(res.body.split(token).length - 1, 'the minting response shows its token once').toBe(1);
        } else {
          expectAbsent(res.body, token, `${res.statusCode} ${res.body.slice(0, 200)}`);
        }
      }
      if (!minted && res.statusCode === 200) expect(res.json().token).toBeUndefined();
      // Not even the hash leaves the store.
      for (const token of tokens)
        expect(res.body.includes(hashToken(token)), res.body.slice(0, 200)).toBe(false);
    }

    const logs = t.logs();
    expect(logs.length).toBeGreaterThan(0);
    for (const token of [...tokens, boot.api_key, boot.personal_access_token])
      expectAbsent(logs, token, 'the log');

    const dump = await dumpDatabase(t);
    for (const token of [...tokens, boot.api_key, boot.personal_access_token]) {
      expectAbsent(dump, token, 'the database');
    }
    // The live credentials are there as their sha256 hashes.
    expect(dump).toContain(hashToken(second));
    expect(dump).toContain(hashToken(boot.api_key));
    expect(dump).toContain(hashToken(boot.personal_access_token));
    expect(dump).not.toContain(hashToken(first));
  });

  it('answers every unusable token with the same 401', async () => {
    const db = t.rt.deps.db;
    const revoked = await insertApiKey(t, orgId, { slug: 'revoked', role: 'owner' });
    await db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.slug, 'revoked'));
    const expired = await insertApiKey(t, orgId, { slug: 'expired', role: 'owner' });
    await db
      .update(apiKeys)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(apiKeys.slug, 'expired'));
    const [owner] = await db.select().from(users).limit(1);
    const revokedPat = await insertPat(t, owner.id, 'revoked-pat');
    await db
      .update(personalAccessTokens)
      .set({ revokedAt: new Date() })
      .where(eq(personalAccessTokens.slug, 'revoked-pat'));
    const expiredPat = await insertPat(t, owner.id, 'expired-pat');
    await db
      .update(personalAccessTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(personalAccessTokens.slug, 'expired-pat'));
    const valid = boot.api_key;
    const last = valid.slice(-1);
    const flipped = valid.slice(0, -1) + (last === 'a' ? 'b' : 'a');

    const variants: Record<string, Record<string, string>> = {
      'revoked key': { authorization: `Bearer ${revoked.token}` },
      'expired key': { authorization: `Bearer ${expired.token}` },
      'revoked PAT': { authorization: `Bearer ${revokedPat.token}` },
      'expired PAT': { authorization: `Bearer ${expiredPat.token}` },
      malformed: { authorization: 'Bearer slc_key_abc' },
      'wrong checksum': { authorization: `Bearer ${flipped}` },
      'unknown well-formed': { authorization: `Bearer ${issueToken('key').token}` },
      'no Bearer scheme': { authorization: valid },
      'Basic scheme': { authorization: `Basic ${Buffer.from(`x:${valid}`).toString('base64')}` },
      'random string': { authorization: 'Bearer Zm9vYmFyYmF6cXV1eA' },
      'empty bearer': { authorization: 'Bearer ' },
      'x-api-key header only': { 'x-api-key': valid },
      'no header': {},
    };
    const routes = ['/organizations/acme/api-keys', '/organizations/acme/api-keys/bootstrap'];
    if (hasRoute('GET', '/users/me')) routes.push('/users/me');
    let reference: unknown;
    for (const url of routes) {
      for (const [name, headers] of Object.entries(variants)) {
        const res = await t.call('GET', url, { headers });
        const ctx = `${name} on ${url}: ${res.statusCode} ${res.body}`;
        expect(res.statusCode, ctx).toBe(401);
        expect(res.json().error.code, ctx).toBe('UNAUTHENTICATED');
        expect(res.json().error.request_id, ctx).toBe(res.headers['x-request-id']);
        reference ??= withoutRequestId(res);
        expect(withoutRequestId(res), ctx).toEqual(reference);
      }
    }
    // The valid token itself still works: the 401s were about the variants.
    expect((await t.call('GET', keys, { token: valid })).statusCode).toBe(200);
  });

  it('records the last use of a key and of a PAT', async () => {
    const created = await t.call('POST', keys, {
      token: boot.api_key,
      body: { name: 'Used', role: 'viewer' },
    });
    expect(created.json().last_used_at).toBeNull();
    const before = Date.now();
    await t.call('GET', '/organizations/acme/api-keys', { token: created.json().token });
    const got = await t.call('GET', `${keys}/used`, { token: boot.api_key });
    const lastUsed = Date.parse(got.json().last_used_at);
    expect(lastUsed).toBeGreaterThanOrEqual(before - 1000);
    expect(lastUsed).toBeLessThanOrEqual(Date.now() + 1000);

    const [owner] = await t.rt.deps.db.select().from(users).limit(1);
    const pat = await insertPat(t, owner.id, 'used-pat');
    await t.call('GET', '/organizations/acme/api-keys', { token: pat.token });
    const [row] = await t.rt.deps.db
      .select()
      .from(personalAccessTokens)
      .where(eq(personalAccessTokens.tokenHash, pat.hash));
    expect(row.lastUsedAt?.getTime()).toBeGreaterThanOrEqual(before - 1000);
  });
});
