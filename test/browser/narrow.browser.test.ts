import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAppHost } from '../../packages/server/src/app-host/app-host';
import { setUserPassword } from '../../packages/server/src/modules/identity/set-password';
import { raiseNotification } from '../../packages/server/src/modules/notifications/notifications.raise';
import { settingsSections } from '../../packages/web/src/lib/places';
import {
  type Call,
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  ORG,
  ok,
  PE,
  pgDataSource,
  runToEnd,
} from '../pipelines/support';
import { startTestApp, type TestApp } from '../support/app';
import { pgQuery, waitUntil } from '../support/runs';
import { cleanOrdersSpec, launchBrowser, screenshotBoth } from './browser';

// Every screen of the app on a phone (390 × 844, docs/app.md "Narrow screens"): no page scrolls
// sideways and every visible control is at least 24 × 24 CSS px (WCAG 2.2, 2.5.8 target size
// minimum, with its spacing and inline exceptions). The screens are read from the web router, so
// a new route fails here until it has a URL below; the data behind them is made through the API.

const EMAIL = 'narrow@example.com';
const PASSWORD = 'narrow-owner-password';
const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const SRC_DB = `sluice_narrow_src_${id}`;
const SINK_DB = `sluice_narrow_sink_${id}`;
const WIDTH = 390;
const HEIGHT = 844;
const MIN_TARGET = 24;

/** The route paths of the web app, read from its router (packages/web/src/router.tsx). */
function routerPaths(): string[] {
  const source = fs.readFileSync(
    path.resolve(import.meta.dirname, '../../packages/web/src/router.tsx'),
    'utf8',
  );
  const paths = [...source.matchAll(/\bpath: '([^']+)'/g)].map((m) => m[1]);
  // Children of the organization route are relative to it.
  return paths.map((p) =>
    p === '/o/$org' || !p.startsWith('/') || !isOrgChild(source, p) ? p : `/o/$org${p}`,
  );
}
function isOrgChild(source: string, p: string) {
  const at = source.indexOf(`path: '${p}'`);
  const before = source.slice(Math.max(0, at - 120), at);
  return before.includes('getParentRoute: () => orgRoute');
}

type Measure = { scrollWidth: number; small: string[] };

/** The page's width and its visible interactive elements under 24 × 24 px that no exception covers. */
async function measure(page: Page): Promise<Measure> {
  return page.evaluate(
    ({ min }) => {
      const g = globalThis as any;
      const doc = g.document;
      const selector =
        'a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [role=link], [role=tab], [role=checkbox], [role=switch], [role=menuitem], [tabindex]:not([tabindex="-1"])';
      type R = { left: number; top: number; right: number; bottom: number; width: number; height: number };
      const targets: { el: any; r: R }[] = [];
      for (const el of doc.querySelectorAll(selector)) {
        const r = el.getBoundingClientRect() as R;
        const style = g.getComputedStyle(el);
        // Not a visible target: nothing drawn (a visually hidden skip link until focused) or hidden.
        if (r.width <= 1 || r.height <= 1 || style.visibility === 'hidden') continue;
        // The text areas of CodeMirror and the scroll regions made focusable are not targets to hit.
        if (el.closest('.cm-editor')) continue;
        targets.push({ el, r });
      }
      // A checkbox or radio button inside its label is hit through the label too: the label is the target.
      const box = (t: { el: any; r: R }): R => {
        const label = t.el.closest?.('label');
        if (label && (t.el.type === 'checkbox' || t.el.type === 'radio')) {
          return label.getBoundingClientRect() as R;
        }
        return t.r;
      };
      const small = (r: R) => r.width < min - 0.5 || r.height < min - 0.5;
      // WCAG's inline exception: a link inside a sentence, whose size the line height of the text sets.
      const inline = (el: any) => {
        if (el.tagName !== 'A' || g.getComputedStyle(el).display !== 'inline') return false;
        const block = el.parentElement;
        const own = (el.textContent ?? '').trim();
        const all = (block?.textContent ?? '').trim();
        return all.length > own.length + 3;
      };
      const centre = (r: R) => [(r.left + r.right) / 2, (r.top + r.bottom) / 2];
      const distToRect = ([x, y]: number[], r: R) => {
        const dx = Math.max(r.left - x, 0, x - r.right);
        const dy = Math.max(r.top - y, 0, y - r.bottom);
        return Math.hypot(dx, dy);
      };
      const boxes = targets.map((t) => ({ el: t.el, r: box(t) }));
      const out: string[] = [];
      for (const t of boxes) {
        if (!small(t.r) || inline(t.el)) continue;
        // WCAG's spacing exception: a 24 px circle centred on it meets no other target, nor the
        // circle of another undersized one.
        const c = centre(t.r);
        const crowded = boxes.some(
          (o) =>
            o !== t &&
            !o.el.contains(t.el) &&
            !t.el.contains(o.el) &&
            (distToRect(c, o.r) < min / 2 ||
              (small(o.r) && Math.hypot(c[0] - centre(o.r)[0], c[1] - centre(o.r)[1]) < min)),
        );
        if (!crowded) continue;
        const name =
          t.el.getAttribute('aria-label') ||
          (t.el.textContent ?? '').trim().slice(0, 30) ||
          t.el.getAttribute('name') ||
          t.el.id ||
          '';
        out.push(
          `${t.el.tagName.toLowerCase()}${t.el.type ? `[type=${t.el.type}]` : ''} "${name}" ${Math.round(t.r.width)}×${Math.round(t.r.height)}`,
        );
      }
      return { scrollWidth: doc.documentElement.scrollWidth, small: out };
    },
    { min: MIN_TARGET },
  );
}

describe('the app at 390 px', { timeout: 600_000 }, () => {
  let t: TestApp;
  let host: FastifyInstance;
  let base: string;
  let token: string;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  const call: Call = (method, url, body) => t.call(method, url, { token, body });
  const urls: Record<string, string[]> = {};

  beforeAll(async () => {
    await pgQuery('postgres', `drop database if exists ${SRC_DB} with (force)`);
    await pgQuery('postgres', `create database ${SRC_DB}`);
    await pgQuery(SRC_DB, 'create table orders (id int, email varchar(100), note text)');
    await pgQuery(
      SRC_DB,
      `insert into orders select g, 'Buyer' || g || '@Example.com', 'note ' || g from generate_series(1, 50) g`,
    );
    await pgQuery('postgres', `drop database if exists ${SINK_DB} with (force)`);
    await pgQuery('postgres', `create database ${SINK_DB}`);
    t = await startTestApp({ worker: true });
    token = (await t.bootstrap('acme', EMAIL)).api_key;
    await setUserPassword(t.rt.deps, { email: EMAIL, password: PASSWORD });
    await createProjectAndEnvironment(call);
    await createDataSource(call, pgDataSource('shop-db', SRC_DB));
    await createDataSource(call, pgDataSource('warehouse', SINK_DB));
    await deployPipeline(call, {
      pipeline: 'clean',
      spec: cleanOrdersSpec,
      bindings: { 'shop-db': 'shop-db', warehouse: 'warehouse' },
    });
    // A finished run with its log.
    const run = await runToEnd(call, 'clean', {}, 120_000);
    expect(run.state, JSON.stringify(run)).toBe('succeeded');
    // A schedule trigger.
    await ok(
      call('POST', `${PE}/pipelines/clean/triggers`, {
        name: 'Nightly orders',
        slug: 'nightly',
        kind: 'schedule',
        schedule: { cron: '30 2 * * *', time_zone: 'Europe/Berlin' },
      }),
      201,
    );
    // The schema, then a drift report: a column the pipeline reads is dropped.
    const importSchema = async () => {
      await ok(call('POST', `${ORG}/data-sources/shop-db/schema-import`), 202);
      await waitUntil(
        async () => (await call('GET', `${ORG}/data-sources/shop-db`)).json(),
        (x: any) => x.schema_status !== 'importing',
        60_000,
      );
    };
    await importSchema();
    await pgQuery(SRC_DB, 'alter table orders drop email');
    await importSchema();
    const reports = await waitUntil(
      async () => (await call('GET', `${ORG}/projects/shop/drift-reports`)).json(),
      (x: any) => x.reports?.length > 0,
      60_000,
    );
    const report = reports.reports[0]?.slug as string;
    expect(report).toBeTruthy();
    // A contract with a revision.
    await ok(
      call('POST', `${ORG}/projects/shop/contracts`, {
        name: 'Clean out',
        slug: 'clean-out',
        target: { pipeline_slug: 'clean', step_slug: 'load' },
      }),
      201,
    );
    await ok(
      call('POST', `${ORG}/projects/shop/contracts/clean-out/revisions`, {
        columns: [
          { name: 'id', type: 'integer', nullable: true },
          { name: 'email', type: 'text', nullable: true },
        ],
      }),
      201,
    );
    // Alerting: a destination, a policy and a notification.
    await ok(
      call('POST', `${ORG}/alert-destinations`, {
        name: 'Ops mail',
        type: 'email',
        non_secret_config: { recipients: ['ops@example.com'] },
      }),
      201,
    );
    await ok(
      call('POST', `${ORG}/alert-policies`, {
        name: 'Everything',
        slug: 'everything',
        scope: 'organization',
        destination_slugs: ['ops-mail'],
      }),
      201,
    );
    const [org] = (await t.rt.deps.store.executeSql(`select id from organizations where slug = 'acme'`))
      .rows as { id: string }[];
    await t.rt.deps.db.transaction((tx) =>
      raiseNotification(tx, t.rt.deps, {
        organizationId: org.id,
        type: 'pipeline_run_failed',
        severity: 'error',
        title: 'Pipeline Clean failed in staging',
        summary: 'Run r-1 failed (SOURCE_FAILED).',
        projectSlug: 'shop',
        environmentSlug: 'staging',
        subject: { kind: 'pipeline', slug: 'clean' },
        sourceKind: 'pipeline_run',
        sourceAction: 'update',
        sourceRefs: [{ kind: 'pipeline', value: 'clean' }],
        sourceKey: 'narrow-1',
      }),
    );
    const notification = (await ok(call('GET', `${ORG}/notifications`), 200)).notifications[0].slug;

    const o = '/o/acme';
    Object.assign(urls, {
      '/sign-in': ['/sign-in'],
      '/verify-email': ['/verify-email?token=not-a-token'],
      '/': ['/'],
      '/invitations/$slug': ['/invitations/inv-unknown'],
      '/o/$org': [o],
      '/o/$org/runs': [`${o}/runs`],
      '/o/$org/runs/$project/$env/$run': [`${o}/runs/shop/staging/${run.slug}`],
      '/o/$org/pipelines': [`${o}/pipelines?project=shop`],
      '/o/$org/pipelines/new': [`${o}/pipelines/new?project=shop`],
      '/o/$org/pipelines/$project/$pipeline': [
        'overview',
        'diff',
        'deploy',
        'checkpoints',
        'edit',
        'triggers',
      ].map((tab) => `${o}/pipelines/shop/clean?tab=${tab}&env=staging`),
      '/o/$org/data-sources': [`${o}/data-sources`],
      '/o/$org/data-sources/new': [`${o}/data-sources/new`, `${o}/data-sources/new?type=postgres`],
      '/o/$org/data-sources/$ds': ['schema', 'settings', 'drift', 'proof'].map(
        (tab) => `${o}/data-sources/shop-db?tab=${tab}`,
      ),
      '/o/$org/queries': [`${o}/queries`],
      '/o/$org/events': [`${o}/events`],
      '/o/$org/audit': [`${o}/audit`],
      '/o/$org/notifications': [`${o}/notifications`],
      '/o/$org/notifications/$slug': [`${o}/notifications/${notification}`],
      '/o/$org/settings/$section': settingsSections.map(([s]) => `${o}/settings/${s}`),
      '/o/$org/alerts/policies': [`${o}/alerts/policies`],
      '/o/$org/alerts/policies/new': [`${o}/alerts/policies/new`],
      '/o/$org/alerts/policies/$slug': [`${o}/alerts/policies/everything`],
      '/o/$org/alerts/destinations': [`${o}/alerts/destinations`],
      '/o/$org/alerts/destinations/new': [`${o}/alerts/destinations/new`],
      '/o/$org/alerts/destinations/$slug': [`${o}/alerts/destinations/ops-mail`],
      '/o/$org/alerts/attempts': [`${o}/alerts/attempts`],
      '/o/$org/pipelines/$project/$pipeline/triggers/$trigger': [
        `${o}/pipelines/shop/clean/triggers/nightly?env=staging`,
      ],
      '/o/$org/triggers': [`${o}/triggers?project=shop&env=staging`],
      '/o/$org/drift': [`${o}/drift?project=shop`],
      '/o/$org/drift/$project/$report': [`${o}/drift/shop/${report}`],
      '/o/$org/contracts': [`${o}/contracts?project=shop`],
      '/o/$org/contracts/$project/$contract': [`${o}/contracts/shop/clean-out`],
      // No receipt exists without a git repository: the page's not-found state is what is measured.
      '/o/$org/data-sources/$ds/proof-receipts/$receipt': [`${o}/data-sources/shop-db/proof-receipts/none`],
    });

    host = await buildAppHost(t.rt.deps);
    await host.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(host.server.address() as AddressInfo).port}`;
    const b = await launchBrowser();
    closeBrowser = b.close;
    const context = await b.browser.newContext({
      viewport: { width: WIDTH, height: HEIGHT },
      deviceScaleFactor: 1,
      isMobile: true,
      hasTouch: true,
    });
    page = await context.newPage();
  }, 600_000);

  afterAll(async () => {
    await closeBrowser?.();
    await host?.close();
    await t?.close();
    for (const db of [SRC_DB, SINK_DB]) {
      await pgQuery('postgres', `drop database if exists ${db} with (force)`).catch(() => {});
    }
  });

  /** Opens a URL and waits for its heading and for its data to have arrived. */
  const open = async (url: string) => {
    await page.goto(`${base}${url}`);
    // Every screen has a heading; the bare organization URL has only the app's frame (main).
    await page.locator('h1, main').first().waitFor();
    await page
      .waitForFunction(() => !(globalThis as any).document.body.textContent.match(/Loading/), null, {
        timeout: 15_000,
      })
      .catch(() => {}); // a screen that keeps loading is still measured as it stands
    // The DAG is laid out in a web worker: wait for its nodes where there is one.
    if (await page.locator('.react-flow').count()) {
      await page.locator('.react-flow__node').first().waitFor({ timeout: 30_000 });
    }
    // Virtualised lists lay out after their data: let two frames pass.
    await page.evaluate(
      () =>
        new Promise((r) => {
          const raf = (globalThis as any).requestAnimationFrame;
          raf(() => raf(() => r(null)));
        }),
    );
  };
  const shotName = (url: string) =>
    `narrow${url.replace(/[?&=/]+/g, '-').replace(/[^a-z0-9-]/gi, '')}`.replace(/-+$/, '');

  it('knows a URL for every route of the router', () => {
    const missing = routerPaths().filter((p) => !urls[p]);
    expect(missing, 'routes without a URL in this test').toEqual([]);
  });

  it('signs in on a phone', async () => {
    await open('/sign-in');
    const m = await measure(page);
    await screenshotBoth(page, shotName('/sign-in'));
    expect(m.scrollWidth).toBeLessThanOrEqual(WIDTH);
    expect(m.small).toEqual([]);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
  });

  it('opens the sidebar as a drawer from a menu button, closing on Escape and on navigation', async () => {
    await open('/o/acme/runs');
    // The sidebar's links are not on the page until the menu opens.
    expect(await page.getByRole('navigation', { name: 'Main' }).isVisible()).toBe(false);
    const menu = page.getByRole('button', { name: 'Menu', exact: true });
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    await menu.click();
    const drawer = page.getByRole('dialog', { name: 'Menu' });
    await drawer.waitFor();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await screenshotBoth(page, 'narrow-menu-open');
    // Focus stays in the drawer (it is modal) and Escape closes it, back on the button.
    expect(await page.evaluate(() => !!(globalThis as any).document.activeElement?.closest('dialog'))).toBe(
      true,
    );
    await page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'hidden' });
    // The button's state follows the dialog's close event in the next render, not in the same frame.
    await expect.poll(() => menu.getAttribute('aria-expanded')).toBe('false');
    expect(
      await page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('aria-label')),
    ).toBe('Menu');
    // Following a link closes it.
    await menu.click();
    await drawer.getByRole('link', { name: 'Pipelines' }).click();
    await page.getByRole('heading', { name: 'Pipelines' }).waitFor();
    await drawer.waitFor({ state: 'hidden' });
    await expect.poll(() => menu.getAttribute('aria-expanded')).toBe('false');
  });

  it('fits every screen in 390 px, with targets of at least 24 × 24 px', async () => {
    const problems: string[] = [];
    const seen: string[] = [];
    for (const [route, list] of Object.entries(urls)) {
      if (route === '/sign-in') continue;
      for (const url of list) {
        await open(url);
        const m = await measure(page);
        await screenshotBoth(page, shotName(url));
        seen.push(url);
        if (m.scrollWidth > WIDTH) problems.push(`${url}: the page is ${m.scrollWidth} px wide`);
        for (const s of m.small) problems.push(`${url}: ${s}`);
      }
    }
    console.log(`narrow screens measured: ${seen.length}`);
    expect(problems).toEqual([]);
  });
});
