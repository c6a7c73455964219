import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliProcess, runCli, startCli, storeForCli } from '../../../test/support/cli';
import { freePort } from '../../../test/support/free-port';
import { storeKind } from '../../../test/support/stores';

const addresses = /API host: (http:\/\/\S+)\n\s+app host: (http:\/\/\S+)\n/;

async function health(url: string) {
  const res = await fetch(`${url}/healthz`);
  return { status: res.status, body: await res.json() };
}

// `sluice serve` as a user runs it: free ports, the printed addresses, a second process on the
// same store, and a graceful SIGTERM.
describe('sluice serve', () => {
  const started: CliProcess[] = [];
  afterAll(() => {
    for (const p of started) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  });

  it('serves both hosts, handles a second process on the same store, and stops on SIGTERM', async () => {
    const store = await storeForCli();
    const serve = () => {
      const p = startCli(['serve', '--api-addr', '127.0.0.1:0', '--app-addr', '127.0.0.1:0'], {
        env: store.env,
      });
      started.push(p);
      return p;
    };
    try {
      const first = serve();
      const [, apiUrl, appUrl] = await first.waitForStdout(addresses);
      expect(first.stdout()).toMatch(
        storeKind() === 'pglite'
          ? `store:    embedded, data directory ${store.env.SLUICE_DATA_DIR}`
          : 'store:    PostgreSQL server (DATABASE_URL)',
      );
      expect(first.stdout()).not.toContain(store.env.DATABASE_URL ?? 'no database url');
      expect(await health(apiUrl)).toEqual({ status: 200, body: { status: 'ok' } });
      expect(await health(appUrl)).toEqual({ status: 200, body: { status: 'ok' } });
      const ready = await fetch(`${apiUrl}/readyz`);
      expect(await ready.json()).toEqual({ status: 'ready', store: storeKind() });

      const second = serve();
      if (storeKind() === 'pglite') {
        // PGlite belongs to one process: the second one must leave it alone, and say why.
        const r = await second.exited;
        expect(r.code).toBe(3);
        expect(r.stderr).toContain(`is in use by process ${first.child.pid}`);
        expect(r.stderr).toContain('DATABASE_URL');
        expect(await health(apiUrl)).toEqual({ status: 200, body: { status: 'ok' } });
      } else {
        // On a PostgreSQL server any number of hosts share the store.
        const [, secondApi] = await second.waitForStdout(addresses);
        expect(await health(secondApi)).toEqual({ status: 200, body: { status: 'ok' } });
        second.child.kill('SIGTERM');
        expect((await second.exited).code).toBe(0);
      }

      first.child.kill('SIGTERM');
      const stopped = await first.exited;
      expect(stopped.code).toBe(0);
      await expect(fetch(`${apiUrl}/healthz`)).rejects.toThrow();
      if (storeKind() === 'pglite') {
        expect(fs.existsSync(path.join(store.env.SLUICE_DATA_DIR, 'sluice.lock'))).toBe(false);
      }

      // The store is free again: a migration (a no-op here) runs to completion.
      const migrated = await runCli(['migrate'], { env: store.env });
      expect(migrated.code, migrated.stderr).toBe(0);
      expect(migrated.stdout).toMatch(/^store migrated: /);
    } finally {
      await store.drop();
    }
  }, 240_000);

  it('listens where SLUICE_API_ADDR and SLUICE_APP_ADDR say, and a given flag overrides only its own', async () => {
    const store = await storeForCli();
    try {
      const [apiPort, appPort] = [await freePort(), await freePort()];
      const env = {
        ...store.env,
        SLUICE_API_ADDR: `127.0.0.1:${apiPort}`,
        SLUICE_APP_ADDR: `127.0.0.1:${appPort}`,
      };
      const fromEnv = startCli(['serve', '--no-worker'], { env });
      started.push(fromEnv);
      const [, apiUrl, appUrl] = await fromEnv.waitForStdout(addresses);
      expect(apiUrl).toBe(`http://127.0.0.1:${apiPort}`);
      expect(appUrl).toBe(`http://127.0.0.1:${appPort}`);
      expect((await health(apiUrl)).status).toBe(200);
      expect((await health(appUrl)).status).toBe(200);
      // Graceful stops are the first test's subject; here the process only has to be gone.
      fromEnv.child.kill('SIGTERM');
      await fromEnv.exited;

      const flagPort = await freePort();
      const flagged = startCli(['serve', '--no-worker', '--api-addr', `127.0.0.1:${flagPort}`], { env });
      started.push(flagged);
      const [, api2, app2] = await flagged.waitForStdout(addresses);
      expect(api2).toBe(`http://127.0.0.1:${flagPort}`);
      expect(app2).toBe(`http://127.0.0.1:${appPort}`);
      flagged.child.kill('SIGTERM');
      await flagged.exited;
    } finally {
      await store.drop();
    }
  }, 240_000);
});
