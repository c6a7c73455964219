import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { CHROMIUM } from './setup-browser';

// One browser per suite with the flags of shared/PEERS.md; playwright gives it a fresh temporary
// profile of its own (it refuses --user-data-dir in launch arguments).
export async function launchBrowser(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
    },
  };
}

/**
 * Orders from the `shop-db` data source, e-mails lower-cased by a transform, into `warehouse`: the
 * pipeline the data screens are shown with.
 */
export const cleanOrdersSpec = {
  steps: [
    {
      slug: 'src',
      kind: 'source',
      data_source_ref: 'shop-db',
      operation: { operation_type: 'sql', sql: 'SELECT * FROM orders' },
    },
    {
      slug: 'clean',
      kind: 'transform',
      operation: { operation_type: 'sql', sql: 'SELECT id, lower(email) AS email FROM src' },
    },
    {
      slug: 'load',
      kind: 'sink',
      data_source_ref: 'warehouse',
      operation: {
        operation_type: 'sql',
        write: { table: 'clean_orders', mode: 'insert', create_table: true },
      },
    },
  ],
  edges: [
    { from: 'src', to: 'clean' },
    { from: 'clean', to: 'load' },
  ],
};

export const ARTIFACTS = path.resolve(import.meta.dirname, '../../webapp-artifacts');

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical findings on the current page (empty when accessible). */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  // Runs in the page; this file is type-checked without the DOM library, hence globalThis.
  const result = await page.evaluate(async () => {
    const g = globalThis as any;
    const r = await g.axe.run(g.document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .map(
        (v: any) =>
          `${v.id} (${v.impact}): ${v.nodes
            .map((n: any) => n.target.join(' '))
            .slice(0, 3)
            .join(', ')}`,
      );
  });
  return result as string[];
}

/** The same screen in the light and the dark scheme, saved for people to look at. */
export async function screenshotBoth(page: Page, name: string) {
  fs.mkdirSync(path.join(ARTIFACTS, 'screens'), { recursive: true });
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    await page.waitForTimeout(150);
    await page.screenshot({
      path: path.join(ARTIFACTS, 'screens', `${name}-${colorScheme}.png`),
      fullPage: false,
    });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}
