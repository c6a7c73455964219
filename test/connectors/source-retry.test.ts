import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capabilityOf, connectorFor, defaultLimits, egressPolicy } from '@sluice/connectors';
import { executeRun, pipelineSpecSchema, planSpec, rowsOf } from '@sluice/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port';

// The engine opens a source again when the connector's error says a retry can help (docs/runs.md
// "Retries"): here a real HTTP source whose server starts listening only after the first
// attempt was refused, and one whose server refuses the credentials, which is not retried.

const http0 = connectorFor('http');
const ctx = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };
const servers: http.Server[] = [];
afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

function listen(port: number, status: number, seen: string[]): Promise<void> {
  const server = http.createServer((req, res) => {
    seen.push(req.url ?? '');
    res.writeHead(status, { 'content-type': 'application/json' }).end('[{"id":1},{"id":2}]');
  });
  servers.push(server);
  return new Promise((r) => server.listen(port, '127.0.0.1', () => r()));
}

async function run(port: number, onWait: () => void, attempts = 3) {
  const spec = pipelineSpecSchema.parse({
    steps: [
      {
        slug: 'people',
        kind: 'source',
        data_source_ref: 'api',
        operation: { operation_type: 'http', method: 'GET', path: '/people' },
      },
      {
        slug: 'keep',
        kind: 'sink',
        data_source_ref: 'out',
        operation: { operation_type: 'sql', write: { table: 'people', mode: 'insert' } },
      },
    ],
    edges: [{ from: 'people', to: 'keep' }],
  });
  const { plan, findings } = planSpec(spec);
  if (!plan) throw new Error(JSON.stringify(findings));
  const conn = {
    config: http0.configSchema.parse({
      base_url: `http://127.0.0.1:${port}`,
      timeout_seconds: 2,
      allow_private_hosts: true,
    }),
    credentials: {},
  };
  const rows: unknown[][] = [];
  const logs: string[] = [];
  const tmpDir = await mkdtemp(join(tmpdir(), 'sluice-retry-'));
  try {
    await executeRun({
      runSlug: 'run-retry',
      spec,
      plan: plan!,
      ports: {
        readSource: (step) => capabilityOf(http0, 'source').read(conn, step, { ...ctx, signal: step.signal }),
        async writeSink(payload) {
          for await (const batch of (await rowsOf(payload)).batches) rows.push(...batch);
          return { rows: rows.length, bytes: 0 };
        },
      },
      cursors: {},
      scope: { runtime: { input: {}, env: {}, secrets: {}, run_slug: 'run-retry' } },
      secretValues: [],
      signal: new AbortController().signal,
      observer: { onStep: () => {} },
      log: (level, _step, message) => {
        logs.push(`${level}: ${message}`);
        if (level === 'warn') onWait();
      },
      tmpDir: join(tmpDir, 'run'),
      sourceRetry: { attempts, delayMs: 200 },
    });
    return { rows, logs, error: null };
  } catch (error) {
    return { rows, logs, error: error as Error };
  } finally {
    await rm(tmpDir, { recursive: true, force: true });
  }
}

describe('a run retries a source only when the connector says it can help', () => {
  it('a refused connection is opened again, and the run reads what the server then answers', async () => {
    const port = await freePort();
    const seen: string[] = [];
    // The server comes up during the wait before the second attempt.
    const starts: Promise<void>[] = [];
    const out = await run(port, () => {
      if (starts.length === 0) starts.push(listen(port, 200, seen));
    });
    expect(starts).toHaveLength(1);
    expect(out.error).toBeNull();
    expect(out.logs.filter((l) => l.startsWith('warn:'))).toEqual([
      expect.stringMatching(/^warn: CONNECTION_FAILED: .*; attempt 2 of 3 in 200 ms$/),
    ]);
    expect(seen).toEqual(['/people']);
    expect(out.rows).toHaveLength(2);
  });

  it('credentials the server refuses are not tried again', async () => {
    const port = await freePort();
    const seen: string[] = [];
    await listen(port, 401, seen);
    const out = await run(port, () => {});
    // ... nor the run (docs/runs.md "Retries": the server retries only a retryable run error).
    expect(out.error).toMatchObject({ code: 'STEP_FAILED', retryable: false });
    expect(out.logs.filter((l) => l.startsWith('warn:'))).toEqual([]);
    expect(seen).toEqual(['/people']);
  });

  it('a source still refused after its tries fails the run with an error a new attempt can help', async () => {
    const out = await run(await freePort(), () => {}, 1);
    expect(out.error).toMatchObject({
      code: 'STEP_FAILED',
      retryable: true,
      message: expect.stringMatching(/^step people: /),
    });
  });
});
