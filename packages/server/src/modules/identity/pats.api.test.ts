import { and, eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, signUpWithToken } from '../../../../../test/support/accounts';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { buildAppHost } from '../../app-host/app-host';
import { events, organizations, personalAccessTokens } from '../../db/schema/index';

const base = '/users/me/personal-access-tokens';
const sameError = (r: { json(): any }) => ({ ...r.json().error, request_id: undefined });

// vitest projects do not inherit the root timeouts, so this suite states its own.
describe('personal access tokens', { timeout: 60_000 }, () => {
  let t: TestApp;
  let appHost: FastifyInstance;
  let owner: { api_key: string; personal_access_token: string; user_slug: string };
  let other: Account;
  beforeAll(async () => {
    t = await startTestApp();
    appHost = await buildAppHost(t.rt.deps);
    owner = await t.bootstrap('acme');
    other = await signUpWithToken(t, appHost, { email: 'other@example.com', name: 'Other' });
  }, 120_000);
  afterAll(async () => {
    await appHost?.close();
    await t?.close();
  });

  it('creates a token shown once that authenticates as its owner', async () => {
    const res = await t.call('POST', base, {
      token: owner.personal_access_token,
      body: { name: 'CLI laptop' },
    });
    expect(res.statusCode).toBe(201);
    const pat = res.json();
    expect(pat).toMatchObject({ slug: 'cli-laptop', name: 'CLI laptop', expires_at: null, revoked_at: null });
    expect(pat.token).toMatch(/^slc_pat_[0-9A-Za-z]{49}$/);
    expect(pat.token_prefix).toBe(pat.token.slice(0, 12));

    const got = await t.call('GET', `${base}/cli-laptop`, { token: owner.personal_access_token });
    expect(got.statusCode).toBe(200);
    expect(got.json().token).toBeUndefined();
    expect(got.json().token_prefix).toBe(pat.token_prefix);

    const me = await t.call('GET', '/users/me', { token: pat.token });
    expect(me.statusCode).toBe(200);
    expect(me.json().slug).toBe(owner.user_slug);
    const used = await t.call('GET', `${base}/cli-laptop`, { token: owner.personal_access_token });
    expect(used.json().last_used_at).toBeTruthy();

    // Creation is security-relevant: recorded in the owner's organization, without the token.
    const [acme] = await t.rt.deps.db.select().from(organizations).where(eq(organizations.slug, 'acme'));
    const rows = await t.rt.deps.db
      .select()
      .from(events)
      .where(
        and(eq(events.organizationId, acme.id), eq(events.entityType, 'member'), eq(events.action, 'create')),
      );
    expect(rows.map((r) => r.eventClass).sort()).toEqual(['activity', 'security_audit']);
    expect(rows[0]).toMatchObject({
      actorType: 'user',
      actorSlug: owner.user_slug,
      entitySlug: owner.user_slug,
    });
    expect(rows[0].metadata).toEqual({ pat_slug: 'cli-laptop', pat_prefix: pat.token_prefix });
    expect(JSON.stringify(rows)).not.toContain(pat.token);
  });

  it('lists, sorts and pages the caller’s own tokens only', async () => {
    for (const name of ['b token', 'a token']) {
      await t.call('POST', base, { token: owner.personal_access_token, body: { name } });
    }
    const byName = await t.call('GET', `${base}?sort_by=personal_access_token_name&order=asc`, {
      token: owner.personal_access_token,
    });
    expect(byName.statusCode).toBe(200);
    const names = byName.json().personal_access_tokens.map((p: any) => p.name);
    expect(names).toHaveLength(4);
    // Text order is the database collation's; whatever it is, 'a token' precedes 'b token'.
    expect(names.indexOf('a token')).toBeLessThan(names.indexOf('b token'));
    const desc = await t.call('GET', `${base}?sort_by=personal_access_token_name&order=desc`, {
      token: owner.personal_access_token,
    });
    expect(desc.json().personal_access_tokens.map((p: any) => p.name)).toEqual([...names].reverse());
    expect(byName.json().personal_access_tokens[0].token).toBeUndefined();

    const first = await t.call('GET', `${base}?limit=2`, { token: owner.personal_access_token });
    expect(first.json().has_more).toBe(true);
    const second = await t.call('GET', `${base}?limit=2&cursor=${first.json().next_cursor}`, {
      token: owner.personal_access_token,
    });
    const slugs = [...first.json().personal_access_tokens, ...second.json().personal_access_tokens].map(
      (p: any) => p.slug,
    );
    expect(new Set(slugs).size).toBe(4);
    expect(second.json().has_more).toBe(false);

    const theirs = await t.call('GET', base, { token: other.token });
    expect(theirs.json().personal_access_tokens.map((p: any) => p.slug)).toEqual(['first-token']);
    // Another user's token does not exist for the caller, whatever the verb.
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const res = await t.call(method, `${base}/cli-laptop`, {
        token: other.token,
        body: method === 'PATCH' ? { name: 'mine now' } : undefined,
      });
      expect(res.statusCode).toBe(404);
    }
    const bad = await t.call('GET', `${base}?sort_by=api_key_name`, { token: owner.personal_access_token });
    expect(bad.statusCode).toBe(400);
  });

  it('renames, validates and refuses duplicates', async () => {
    const renamed = await t.call('PATCH', `${base}/cli-laptop`, {
      token: owner.personal_access_token,
      body: { name: 'Old laptop' },
    });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({ slug: 'cli-laptop', name: 'Old laptop' });
    const empty = await t.call('POST', base, { token: owner.personal_access_token, body: { name: '' } });
    expect(empty.json().error.code).toBe('ENTITY_NAME_INVALID');
    const past = await t.call('POST', base, {
      token: owner.personal_access_token,
      body: { name: 'old', expires_at: '2000-01-01T00:00:00Z' },
    });
    expect(past.statusCode).toBe(400);
    expect(past.json().error.validation_errors[0].path).toBe('expires_at');
    const dup = await t.call('POST', base, {
      token: owner.personal_access_token,
      body: { name: 'x', slug: 'cli-laptop' },
    });
    expect(dup.statusCode).toBe(409);
    // Slugs are per user: another user may reuse one.
    const reuse = await t.call('POST', base, { token: other.token, body: { name: 'x', slug: 'cli-laptop' } });
    expect(reuse.statusCode).toBe(201);
  });

  it('revoked and expired tokens get the same 401 as a malformed one', async () => {
    const malformed = await t.call('GET', '/users/me', { token: 'slc_pat_not-a-token' });
    expect(malformed.statusCode).toBe(401);

    const pat = (
      await t.call('POST', base, { token: owner.personal_access_token, body: { name: 'short lived' } })
    ).json();
    const del = await t.call('DELETE', `${base}/short-lived`, { token: owner.personal_access_token });
    expect(del.statusCode).toBe(204);
    const revoked = await t.call('GET', '/users/me', { token: pat.token });
    expect(revoked.statusCode).toBe(401);
    expect(sameError(revoked)).toEqual(sameError(malformed));
    expect(
      (await t.call('GET', `${base}/short-lived`, { token: owner.personal_access_token })).statusCode,
    ).toBe(404);
    const [acme] = await t.rt.deps.db.select().from(organizations).where(eq(organizations.slug, 'acme'));
    const revokes = await t.rt.deps.db
      .select()
      .from(events)
      .where(and(eq(events.organizationId, acme.id), eq(events.action, 'revoke')));
    expect(revokes.map((r) => r.eventClass).sort()).toEqual(['activity', 'security_audit']);
    expect(revokes[0].metadata).toMatchObject({ pat_slug: 'short-lived' });

    const soon = (
      await t.call('POST', base, {
        token: owner.personal_access_token,
        body: { name: 'expiring', expires_at: new Date(Date.now() + 60_000).toISOString() },
      })
    ).json();
    expect((await t.call('GET', '/users/me', { token: soon.token })).statusCode).toBe(200);
    // Let the clock pass its expiry (moved back in the store instead of sleeping a minute).
    await t.rt.deps.db
      .update(personalAccessTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(personalAccessTokens.tokenPrefix, soon.token_prefix));
    const expired = await t.call('GET', '/users/me', { token: soon.token });
    expect(expired.statusCode).toBe(401);
    expect(sameError(expired)).toEqual(sameError(malformed));
  });

  it('refuses API keys', async () => {
    for (const [method, url] of [
      ['GET', base],
      ['POST', base],
      ['GET', `${base}/cli-laptop`],
    ]) {
      const res = await t.call(method, url, {
        token: owner.api_key,
        body: method === 'POST' ? { name: 'k' } : undefined,
      });
      expect(res.statusCode).toBe(403);
      expect(res.json().error.code).toBe('FORBIDDEN');
    }
  });
});
