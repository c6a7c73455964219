import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAppHost } from '../../packages/server/src/app-host/app-host';
import { raiseNotification } from '../../packages/server/src/modules/notifications/notifications.raise';
import { type SmtpPeer, startSmtpPeer } from '../peers/smtp';
import { startTestApp, type TestApp } from '../support/app';

// Every app URL the docs promise for a link in mail (written `SLUICE_PUBLIC_URL/…` in docs/*.md)
// is followed from a real mail, sent through a real SMTP peer: the mail links to exactly such a
// URL, the app host serves the app there, and the app's router has a route for it.

const root = path.resolve(import.meta.dirname, '../..');
const PUBLIC_URL = 'http://app.sluice.test:8123';

/** `SLUICE_PUBLIC_URL/…` templates written in the docs, `{name}` standing for one value. */
function documentedMailLinks(): { template: string; doc: string }[] {
  const out: { template: string; doc: string }[] = [];
  const dir = path.join(root, 'docs');
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.md'))) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    for (const m of text.matchAll(/`SLUICE_PUBLIC_URL(\/[^`\s]*)`/g)) out.push({ template: m[1], doc: f });
  }
  return out;
}

const templateRegex = (template: string) =>
  new RegExp(
    `^${template
      .split(/(\{[a-z_]+\})/)
      .map((part) => (/^\{[a-z_]+\}$/.test(part) ? '[^/?#&\\s]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
      .join('')}$`,
  );

/** Full paths of the web app's routes, read from its router (`$name` is one path segment). */
function appRoutes(): string[] {
  const src = fs.readFileSync(path.join(root, 'packages/web/src/router.tsx'), 'utf8');
  const defs = new Map<string, { parent: string | null; path: string }>();
  const starts = [...src.matchAll(/const (\w+) = (createRoute|createRootRouteWithContext)\b/g)];
  starts.forEach((m, i) => {
    const body = src.slice(m.index, starts[i + 1]?.index ?? src.length);
    const parent = /getParentRoute: \(\) => (\w+)/.exec(body)?.[1] ?? null;
    const own = /\bpath: '([^']*)'/.exec(body)?.[1] ?? '';
    defs.set(m[1], { parent: m[2] === 'createRoute' ? parent : null, path: own });
  });
  const full = (name: string): string => {
    const d = defs.get(name);
    if (!d) throw new Error(`route ${name} is not defined in router.tsx`);
    const prefix = d.parent ? full(d.parent) : '';
    return `${prefix}/${d.path}`.replace(/\/+/g, '/').replace(/(.)\/$/, '$1');
  };
  return [...defs.keys()].filter((n) => defs.get(n)!.path !== '').map(full);
}

const routeMatches = (route: string, pathname: string) => {
  const a = route.split('/');
  const b = pathname.split('/');
  return a.length === b.length && a.every((seg, i) => (seg.startsWith('$') ? b[i] !== '' : seg === b[i]));
};

describe('links in mail', { timeout: 120_000 }, () => {
  let t: TestApp;
  let smtp: SmtpPeer;
  let appHost: FastifyInstance;
  const links: string[] = [];

  beforeAll(async () => {
    smtp = await startSmtpPeer();
    t = await startTestApp({
      worker: true,
      env: {
        SLUICE_SMTP_URL: smtp.url,
        SLUICE_PUBLIC_URL: PUBLIC_URL,
        SLUICE_ALERT_RETRY_DELAYS_SECONDS: '0,0,0,0',
      },
    });
    appHost = await buildAppHost(t.rt.deps);
    const key = (await t.bootstrap('acme')).api_key;
    const call = (method: string, url: string, body?: unknown) => t.call(method, url, { token: key, body });

    // An alert mail.
    expect(
      (
        await call('POST', '/organizations/acme/alert-destinations', {
          name: 'Ops',
          slug: 'ops',
          type: 'email',
          non_secret_config: { recipients: ['ops@example.com'] },
        })
      ).statusCode,
    ).toBe(201);
    expect(
      (
        await call('POST', '/organizations/acme/alert-policies', {
          name: 'All failures',
          scope: 'organization',
          notification_type: 'pipeline_run_failed',
          destination_slugs: ['ops'],
        })
      ).statusCode,
    ).toBe(201);
    const [org] = (await t.rt.deps.store.executeSql(`select id from organizations where slug = 'acme'`)).rows;
    await t.rt.deps.db.transaction((tx) =>
      raiseNotification(tx, t.rt.deps, {
        organizationId: (org as { id: string }).id,
        type: 'pipeline_run_failed',
        severity: 'error',
        title: 'Pipeline Orders failed in prod',
        summary: 'Run r failed (SOURCE_FAILED).',
        projectSlug: 'shop',
        environmentSlug: 'prod',
        subject: { kind: 'pipeline', slug: 'orders-sync' },
        sourceKind: 'pipeline_run',
        sourceAction: 'update',
        sourceRefs: [{ kind: 'pipeline', value: 'orders-sync' }],
        sourceKey: 'run:1',
        escalateAfter: 3,
      }),
    );
    // A verification mail and an invitation mail.
    const up = await t.call('POST', '/users', {
      body: { email: 'new@example.com', name: 'New Person', password: 'a-long-enough-password' },
    });
    expect(up.statusCode, up.body).toBeLessThan(300);
    const inv = await call('POST', '/organizations/acme/invitations', {
      email: 'guest@example.com',
      role: 'viewer',
    });
    expect(inv.statusCode, inv.body).toBe(201);

    for (const to of ['ops@example.com', 'new@example.com', 'guest@example.com']) {
      const mail = await smtp.waitFor((m) => m.to.some((a) => a.includes(to)), 30_000);
      const found = mail.text.match(new RegExp(`${PUBLIC_URL.replace(/[.:]/g, '\\$&')}/\\S+`, 'g')) ?? [];
      expect(found, `a link to the app in the mail to ${to}:\n${mail.text}`).not.toEqual([]);
      links.push(...found.map((l) => l.replace(/[.,;)]+$/, '').slice(PUBLIC_URL.length)));
    }
  });
  afterAll(async () => {
    await appHost?.close();
    await t?.close();
    await smtp?.close();
  });

  it('the docs name each app URL a mail links to, and each one a mail really links to', () => {
    const documented = documentedMailLinks();
    expect(documented.map((d) => d.template).sort()).toEqual(
      expect.arrayContaining([
        '/invitations/{slug}',
        '/o/{org}/notifications/{slug}',
        '/verify-email?token={token}',
      ]),
    );
    for (const { template, doc } of documented)
      expect(
        links.some((l) => templateRegex(template).test(l)),
        `docs/${doc} promises ${template}; mails link to ${links.join(', ')}`,
      ).toBe(true);
    for (const link of links)
      expect(
        documented.some((d) => templateRegex(d.template).test(link)),
        `a mail links to ${link}, which no doc names`,
      ).toBe(true);
  });

  it('each link from a mail is served by the app host and known to the app router', async () => {
    const routes = appRoutes();
    expect(routes).toEqual(expect.arrayContaining(['/sign-in', '/o/$org/runs']));
    for (const link of links) {
      const res = await appHost.inject({ method: 'GET', url: link });
      expect(res.statusCode, link).toBe(200);
      expect(res.headers['content-type'], link).toMatch(/^text\/html/);
      const pathname = new URL(link, PUBLIC_URL).pathname;
      expect(
        routes.filter((r) => routeMatches(r, pathname)),
        `${pathname} has no route in the app`,
      ).toHaveLength(1);
    }
    // The check can fail: the address the docs used to give has no route.
    expect(routes.some((r) => routeMatches(r, '/organizations/acme/notifications/n-1'))).toBe(false);
  });
});
