import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAppHost } from '../packages/server/src/app-host/app-host';
import { BODY_LIMITS } from '../packages/server/src/http/json-body';
import { setUserPassword } from '../packages/server/src/modules/identity/set-password';
import { sessionCookieOf } from './support/accounts';
import { startTestApp, type TestApp } from './support/app';

const EMAIL = 'owner@example.com';
const PASSWORD = 'hostile-bodies-password-1';
const MiB = 1024 * 1024;

// Bodies built to make a parser or a walk of the parsed value do work that grows faster than
// their size (docs/operations.md, "Request bodies"). Each is sent to a public and a private route
// of both hosts over real sockets while another client polls both /healthz: the server must keep
// answering and refuse each body with a 4xx naming the limit. Before the single-pass check, the
// deep body alone held the event loop for minutes (this suite then ran out of time), repeated keys
// were accepted and invalid UTF-8 became U+FFFD.
const hostile: { name: string; body: Buffer; code: string; path?: string }[] = [
  {
    name: 'depth 100,000 in ~600 KB',
    body: Buffer.from(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`),
    code: 'too_deep',
    path: Array(BODY_LIMITS.depth).fill('a').join('.'),
  },
  {
    name: '1 MiB of one string',
    body: Buffer.from(`{"name":"${'x'.repeat(MiB - 11)}"}`),
    code: 'string_too_long',
    path: 'name',
  },
  {
    name: '100k keys',
    body: Buffer.from(`{${Array.from({ length: 100_000 }, (_, i) => `"${i.toString(36)}":1`).join(',')}}`),
    code: 'too_many_keys',
    path: '(body)',
  },
  {
    name: '100k array elements',
    body: Buffer.from(`{"name":"n","list":[${Array(100_000).fill(0).join(',')}]}`),
    code: 'too_many_items',
    path: 'list',
  },
  {
    name: 'a repeated key',
    body: Buffer.from('{"name":"a","name":"b"}'),
    code: 'duplicate_key',
    path: 'name',
  },
  {
    name: 'invalid UTF-8',
    body: Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xc3, 0x28]), Buffer.from('b"}')]),
    code: 'invalid_utf8',
    path: 'name',
  },
];

describe('hostile request bodies', () => {
  let t: TestApp;
  let host: FastifyInstance;
  let apiUrl: string;
  let appUrl: string;
  let token: string;
  let cookie: string;
  let csrf: string;

  beforeAll(async () => {
    t = await startTestApp({ env: { SLUICE_RATE_LIMIT_PUBLIC: '1000', SLUICE_LOG_LEVEL: 'warn' } });
    host = await buildAppHost(t.rt.deps);
    token = (await t.bootstrap('acme', EMAIL)).api_key;
    await setUserPassword(t.rt.deps, { email: EMAIL, password: PASSWORD });
    apiUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
    appUrl = await host.listen({ host: '127.0.0.1', port: 0 });
    const signedIn = await host.inject({
      method: 'POST',
      url: '/session',
      payload: { email: EMAIL, password: PASSWORD },
    });
    expect(signedIn.statusCode, signedIn.body).toBe(201);
    cookie = sessionCookieOf(signedIn);
    csrf = signedIn.json().csrf_token;
  }, 120_000);
  afterAll(async () => {
    await host?.close();
    await t?.close();
  });

  const routes = (): { name: string; url: string; headers: Record<string, string> }[] => [
    { name: 'API sign-up (public)', url: `${apiUrl}/users`, headers: {} },
    {
      name: 'API project create (private)',
      url: `${apiUrl}/organizations/acme/projects`,
      headers: { authorization: `Bearer ${token}` },
    },
    { name: 'app sign-in (public)', url: `${appUrl}/session`, headers: { 'sec-fetch-site': 'same-origin' } },
    {
      name: 'app project create (private)',
      url: `${appUrl}/api/organizations/acme/projects`,
      headers: { cookie: `sluice_session=${cookie}`, 'x-csrf-token': csrf, 'sec-fetch-site': 'same-origin' },
    },
  ];

  it('refuses each with a 4xx naming the limit while /healthz keeps answering on both hosts', async () => {
    const polls: number[] = [];
    let sending = true;
    const poller = (async () => {
      // A separate client: one /healthz after another on each host until the bodies are answered.
      while (sending) {
        for (const base of [apiUrl, appUrl]) polls.push((await fetch(`${base}/healthz`)).status);
      }
    })();
    const answers = await Promise.all(
      routes().flatMap((route) =>
        hostile.map(async (h) => {
          const res = await fetch(route.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...route.headers },
            body: h.body,
          });
          return { route: route.name, body: h, status: res.status, answer: (await res.json()) as any };
        }),
      ),
    );
    sending = false;
    await poller;

    for (const a of answers) {
      const what = `${a.body.name} → ${a.route}`;
      expect(a.status, what).toBe(400);
      expect(a.answer.error.code, what).toBe('VALIDATION_FAILED');
      expect(a.answer.error.validation_errors, what).toEqual([
        expect.objectContaining({ code: a.body.code, path: a.body.path }),
      ]);
    }
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.every((s) => s === 200)).toBe(true);
    // Nothing was created by any of them.
    const projects = await t.call('GET', '/organizations/acme/projects', { token });
    expect(projects.json().projects).toEqual([]);
  });

  it('keeps answering normal requests right after the hostile ones', async () => {
    for (const route of routes().filter((r) => r.name.includes('project'))) {
      const slug = route.name.startsWith('API') ? 'from-api' : 'from-app';
      const res = await fetch(route.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...route.headers },
        body: JSON.stringify({ slug, name: `Made ${slug}` }),
      });
      expect(res.status, await res.clone().text()).toBe(201);
    }
  });
});
