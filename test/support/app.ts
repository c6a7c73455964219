import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { Response as InjectResponse } from 'light-my-request';
import { type App, buildApp } from '../../packages/server/src/app';
import { parseConfig } from '../../packages/server/src/env';
import { startWorker } from '../../packages/server/src/jobs/worker';
import { type BootstrapResult, bootstrap } from '../../packages/server/src/modules/system/bootstrap';
import { openRuntime, type Runtime } from '../../packages/server/src/runtime';
import { freshStore } from './fresh-store';
import { storeKind } from './stores';

export type TestApp = {
  app: App;
  rt: Runtime;
  kind: ReturnType<typeof storeKind>;
  /** Every log line the app wrote, for canary checks. */
  logs: () => string;
  /** app.inject with a bearer token and JSON body. */
  call(
    method: string,
    url: string,
    opts?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<InjectResponse>;
  bootstrap(orgSlug?: string, email?: string): Promise<BootstrapResult>;
  close(): Promise<void>;
};

/** An API host (and optionally a worker) on a fresh store of the project's kind. */
export async function startTestApp(
  opts: { env?: Record<string, string>; worker?: boolean } = {},
): Promise<TestApp> {
  const store = await freshStore();
  const config = parseConfig({
    SLUICE_LOG_LEVEL: 'info',
    SLUICE_QUEUE_POLL_SECONDS: '0.5',
    SLUICE_CHECK_RESPONSES: '1',
    SLUICE_API_ADDR: '127.0.0.1:0',
    SLUICE_MASTER_KEY: randomBytes(32).toString('base64'),
    ...store.env,
    ...opts.env,
  });
  let captured = '';
  const logStream = new PassThrough();
  logStream.on('data', (c) => {
    captured += c.toString();
  });
  const rt = await openRuntime(config, { logStream, supervise: false });
  if (opts.worker) await startWorker(rt.deps);
  const app = await buildApp(rt.deps);
  await app.ready();
  return {
    app,
    rt,
    kind: storeKind(),
    logs: () => captured,
    async call(method, url, o = {}) {
      // On PGlite a request can run start to finish on promise callbacks alone; a long suite
      // would then never reach the event loop's poll phase, where vitest's worker reads its IPC,
      // and the worker reports a false "Timeout calling onTaskUpdate". One turn per call avoids it.
      await new Promise((resolve) => setImmediate(resolve));
      const headers: Record<string, string> = { ...o.headers };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      if (o.body !== undefined) headers['content-type'] ??= 'application/json';
      return app.inject({
        method: method as any,
        url,
        headers,
        payload:
          o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body),
      });
    },
    bootstrap: (orgSlug = 'acme', email = 'owner@example.com') => bootstrap(rt.deps, { orgSlug, email }),
    async close() {
      await app.close();
      await rt.close();
      await store.drop();
    },
  };
}
