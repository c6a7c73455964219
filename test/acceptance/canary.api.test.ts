import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Response as InjectResponse } from 'light-my-request';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAppHost } from '../../packages/server/src/app-host/app-host';
import { hashToken } from '../../packages/server/src/http/tokens';
import { type SmtpPeer, startSmtpPeer } from '../peers/smtp';
import { startTestApp, type TestApp } from '../support/app';
import { dumpDatabase, printServerErrors, sqlRows } from './support';

// One recognisable password and one token, pushed through a whole account's life and through
// failing requests in every place a client might put them, must never come back out: not in a
// response (but the one that minted the token), not in the log, not in the database.

const slow = { timeout: 300_000 };

const canary = (what: string) => `Canary${what}-${randomBytes(9).toString('hex')}`;
const PASSWORD = canary('Password');
const NEW_PASSWORD = canary('NewPassword');
const EMAIL = 'canary@canary.example';

describe('canary secrets', slow, () => {
  let t: TestApp;
  let host: FastifyInstance;
  let smtp: SmtpPeer;
  /** Every response of the flow, with the secret it is allowed to show (its own minted token). */
  const seen: { what: string; res: InjectResponse; mints?: string }[] = [];
  const secrets = { pat: '', key: '', verification: '' };

  async function api(what: string, method: string, url: string, o: Parameters<TestApp['call']>[2] = {}) {
    const res = await t.call(method, url, o);
    seen.push({ what, res });
    return res;
  }
  // The app host wants the session's CSRF token with every change; the latest sign-in's is kept.
  let csrf = '';
  async function app(what: string, method: string, url: string, body?: unknown, cookie?: string) {
    const res = await host.inject({
      method: method as any,
      url,
      headers: {
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...(cookie ? { cookie, 'x-csrf-token': csrf } : {}),
      },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    if (method === 'POST' && url === '/session' && res.statusCode === 201) csrf = res.json().csrf_token;
    seen.push({ what, res });
    return res;
  }

  beforeAll(async () => {
    smtp = await startSmtpPeer();
    t = await startTestApp({ env: { SLUICE_SMTP_URL: smtp.url }, worker: true });
    host = await buildAppHost(t.rt.deps);
    await host.ready();
  }, slow.timeout);
  afterAll(async () => {
    printServerErrors(t);
    await host?.close();
    await t?.close();
    await smtp?.close();
  }, slow.timeout);

  it('runs an account through sign-up, sign-in, tokens and failures', async () => {
    const signUp = await api('sign-up', 'POST', '/users', {
      body: { email: EMAIL, password: PASSWORD, name: 'Canary' },
    });
    expect(signUp.statusCode, signUp.body).toBe(201);
    const mail = await smtp.waitFor((m) => m.to.includes(EMAIL), 30_000);
    const found = /token=([0-9A-Za-z]+)/.exec(mail.text);
    expect(found, mail.text).toBeTruthy();
    secrets.verification = found![1];
    const verified = await api('verify', 'POST', '/users/email-verification', {
      body: { token: secrets.verification },
    });
    expect(verified.statusCode, verified.body).toBe(200);

    // The browser signs in with the password and mints the first personal access token.
    const wrong = await app('sign-in, wrong password', 'POST', '/session', {
      email: EMAIL,
      password: `${PASSWORD}x`,
    });
    expect(wrong.statusCode).toBe(401);
    const stranger = await app('sign-in, unknown email', 'POST', '/session', {
      email: 'nobody@canary.example',
      password: PASSWORD,
    });
    expect(stranger.statusCode).toBe(401);
    const session = await app('sign-in', 'POST', '/session', { email: EMAIL, password: PASSWORD });
    expect(session.statusCode, session.body).toBe(201);
    const cookie = String(session.headers['set-cookie']).split(';')[0];
    const patRes = await app('mint PAT', 'POST', '/session/personal-access-tokens', { name: 'cli' }, cookie);
    expect(patRes.statusCode, patRes.body).toBe(201);
    secrets.pat = patRes.json().token;
    seen[seen.length - 1].mints = secrets.pat;
    const pat = secrets.pat;

    const org = await api('create org', 'POST', '/organizations', {
      token: pat,
      body: { name: 'Canary Org' },
    });
    expect(org.statusCode, org.body).toBe(201);
    const keys = `/organizations/${org.json().slug}/api-keys`;
    const created = await api('create key', 'POST', keys, {
      token: pat,
      body: { name: 'canary key', role: 'admin' },
    });
    expect(created.statusCode, created.body).toBe(201);
    secrets.key = created.json().token;
    seen[seen.length - 1].mints = secrets.key;
    const key = secrets.key;
    for (let i = 0; i < 20; i++) {
      expect((await api('use key', 'GET', keys, { token: key })).statusCode).toBe(200);
      expect((await api('use key', 'GET', `${keys}/canary-key`, { token: key })).statusCode).toBe(200);
    }
    await api('use PAT', 'GET', '/users/me', { token: pat });
    await api('list PATs', 'GET', '/users/me/personal-access-tokens', { token: pat });

    // The password changes once (needs the current one) and fails twice.
    const noCurrent = await api('change password without current', 'PATCH', '/users/me', {
      token: pat,
      body: { password: NEW_PASSWORD },
    });
    expect(noCurrent.statusCode).toBeGreaterThanOrEqual(400);
    const badCurrent = await api('change password, wrong current', 'PATCH', '/users/me', {
      token: pat,
      body: { password: NEW_PASSWORD, current_password: `${PASSWORD}x` },
    });
    expect(badCurrent.statusCode).toBeGreaterThanOrEqual(400);
    const changed = await api('change password', 'PATCH', '/users/me', {
      token: pat,
      body: { password: NEW_PASSWORD, current_password: PASSWORD },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    const again = await app('sign-in with the new password', 'POST', '/session', {
      email: EMAIL,
      password: NEW_PASSWORD,
    });
    expect(again.statusCode, again.body).toBe(201);

    // Secrets where they do not belong: headers, bodies, query strings, broken JSON.
    const failing: [string, string, string, Parameters<TestApp['call']>[2]][] = [
      ['key in x-api-key', 'GET', keys, { headers: { 'x-api-key': key } }],
      ['key with Token scheme', 'GET', keys, { headers: { authorization: `Token ${key}` } }],
      ['key without scheme', 'GET', keys, { headers: { authorization: key } }],
      ['password as basic auth', 'GET', keys, { headers: { authorization: `Basic ${EMAIL}:${PASSWORD}` } }],
      ['key in a cookie', 'GET', keys, { headers: { cookie: `token=${key}` } }],
      ['key in the query', 'GET', `${keys}?token=${key}`, { token: key }],
      [
        'secrets in unknown body fields',
        'POST',
        keys,
        {
          token: key,
          body: { name: 'x', role: 'viewer', token: key, password: PASSWORD },
        },
      ],
      [
        'secrets in known fields of the wrong type',
        'POST',
        keys,
        { token: key, body: { name: 7, role: key } },
      ],
      [
        'password as a name',
        'POST',
        keys,
        { token: key, body: { name: PASSWORD.repeat(5), role: 'viewer' } },
      ],
      ['key as a verification token', 'POST', '/users/email-verification', { body: { token: key } }],
      [
        'spent verification token',
        'POST',
        '/users/email-verification',
        { body: { token: secrets.verification } },
      ],
      [
        'sign-up with a bad email',
        'POST',
        '/users',
        { body: { email: PASSWORD, password: PASSWORD, name: 'C' } },
      ],
      ['broken JSON', 'POST', keys, { token: key, body: `{"password": "${PASSWORD}", "token": "${key}"` }],
      [
        'password field on PAT creation',
        'POST',
        '/users/me/personal-access-tokens',
        {
          token: pat,
          body: { name: 'x', password: PASSWORD },
        },
      ],
      ['key as a slug', 'GET', `${keys}/${key}`, { token: pat }],
    ];
    // A route without query parameters ignores them; the value must still go nowhere.
    await api('password in the query', 'GET', `/users/me?password=${PASSWORD}`, { token: pat });
    for (const [what, method, url, o] of failing) {
      const res = await api(what, method, url, o);
      expect(res.statusCode, `${what}: ${res.body}`).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, `${what}: ${res.body}`).toBeLessThan(500);
    }
    // A registered address answers like a new sign-up (docs/account.md) and makes nothing; its
    // password must go nowhere all the same.
    const signUpAgain = await api('sign-up again', 'POST', '/users', {
      body: { email: EMAIL, password: PASSWORD, name: 'Canary' },
    });
    expect(signUpAgain.statusCode, signUpAgain.body).toBe(201);
    const signInAsBody = await app('password in a failing sign-in body', 'POST', '/session', {
      email: EMAIL,
      password: PASSWORD,
      token: key,
    });
    expect(signInAsBody.statusCode).toBe(400);
    // A bearer token sent to the app host is refused before anything reads it.
    const bearerAtHost = await host.inject({
      method: 'GET',
      url: '/session',
      headers: { authorization: `Bearer ${key}` },
    });
    seen.push({ what: 'bearer at the app host', res: bearerAtHost });
    expect(bearerAtHost.statusCode).toBe(400);
  });

  it('never shows the password, and shows each token only in the response that minted it', async () => {
    expect(secrets.key).toMatch(/^slc_key_/);
    expect(secrets.pat).toMatch(/^slc_pat_/);
    const tokens = [secrets.key, secrets.pat, secrets.verification];
    for (const { what, res, mints } of seen) {
      const text = `${JSON.stringify(res.headers)}\n${res.body}`;
      for (const pw of [PASSWORD, NEW_PASSWORD])
        expect(text.includes(pw), `${what} shows a password`).toBe(false);
      for (const token of tokens) {
        const n = text.split(token).length - 1;
        expect(n, `${what}: ${text.slice(0, 300)}`).toBe(token === mints ? 1 : 0);
        // The part after the stored prefix, in case something prints a token in pieces.
        if (token !== mints && token !== secrets.verification)
          expect(text.includes(token.slice(12)), what).toBe(false);
      }
    }
    expect(seen.filter((s) => s.mints)).toHaveLength(2);
  });

  it('keeps them out of the log', () => {
    expect(secrets.key && secrets.pat && secrets.verification, 'the flow minted its secrets').toBeTruthy();
    const logs = t.logs();
    expect(logs).toContain('"host":"app"');
    for (const secret of [PASSWORD, NEW_PASSWORD, secrets.key, secrets.pat, secrets.verification]) {
      expect(logs.includes(secret), `the log holds ${secret.slice(0, 12)}…`).toBe(false);
    }
    expect(logs.includes(secrets.key.slice(12))).toBe(false);
    expect(logs.includes(secrets.pat.slice(12))).toBe(false);
  });

  it('stores only hashes', async () => {
    expect(secrets.key && secrets.pat && secrets.verification, 'the flow minted its secrets').toBeTruthy();
    const dump = await dumpDatabase(t);
    for (const secret of [PASSWORD, NEW_PASSWORD, secrets.key, secrets.pat, secrets.verification]) {
      expect(dump.includes(secret), `the database holds ${secret.slice(0, 12)}…`).toBe(false);
    }
    expect(dump.includes(secrets.key.slice(12))).toBe(false);
    expect(dump.includes(secrets.pat.slice(12))).toBe(false);
    expect(dump).toContain(hashToken(secrets.key));
    expect(dump).toContain(hashToken(secrets.pat));
    expect(dump).toContain(hashToken(secrets.verification));
    const [user] = await sqlRows(t, 'select password_hash from users where email = $1', [EMAIL]);
    expect(user.password_hash).toMatch(/^\$argon2id\$/);
  });
});
