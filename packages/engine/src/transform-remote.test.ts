import { fork } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { alive } from '../../../test/support/processes';
import {
  collectSink,
  edges,
  harness,
  memoryPorts,
  rejection,
  rowsSource,
  sink,
  source,
  testTransformHost,
  transform,
} from './test-support';
import { type TransformHost, transformHost } from './transform-remote';

// The transform host's own behaviour (transform.test.ts runs every transform case through it
// too): the child starts with a run that has a transform (or its first transform), stops once
// idle and starts again; a run whose host dies or is canceled ends as such, and the next one runs
// in a new child.

const hosts: TransformHost[] = [];
const newHost = (idleMs?: number) => {
  const h = testTransformHost(idleMs);
  hosts.push(h);
  return h;
};
afterAll(() => {
  for (const h of hosts) h.stop();
});

const until = async (ok: () => boolean, what: string) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
  if (!ok()) throw new Error(`timed out waiting for ${what}`);
};

const spec = (sql: string) => ({
  steps: [source('s'), transform('t', sql), sink('load')],
  edges: edges(['s', 't'], ['t', 'load']),
});
// A query that runs for minutes unless stopped.
const SLOW = 'SELECT (SELECT count(*) FROM range(100000000000)) AS n, id FROM s';

async function runOnce(host: TransformHost, sql: string, signal?: AbortSignal) {
  const got: unknown[][] = [];
  const h = await harness(
    spec(sql),
    memoryPorts({ s: rowsSource(['id:int'], [[[1], [2]]]) }, { load: collectSink(got) }),
  );
  try {
    await h.run({ transforms: host, ...(signal ? { signal } : {}) });
    return { got, logs: h.logs };
  } finally {
    await h.cleanup();
  }
}

describe('a transform host', () => {
  it('runs DuckDB in its child, which stops once idle and starts again on the next transform', async () => {
    const host = newHost(300);
    expect(host.pid).toBeNull();
    // The result as COPY CSV, as a SQL sink takes it; the transform's log lines come back. The
    // child is read while it writes the result: once the run has ended, it stops after 300 ms idle,
    // which a loaded machine can spend before the test reads it.
    let text = '';
    let pid = 0;
    let maps = '';
    const h = await harness(
      spec('SELECT id * 10 AS x FROM s ORDER BY id'),
      memoryPorts(
        { s: rowsSource(['id:int'], [[[1], [2]]]) },
        {
          load: async (input) => {
            if (input.kind !== 'rows' || !input.csv) throw new Error('CSV expected');
            pid = host.pid ?? 0;
            if (pid) maps = fs.readFileSync(`/proc/${pid}/maps`, 'utf8');
            for await (const c of input.csv.chunks) text += Buffer.from(c).toString();
            return { rows: input.csv.count(), bytes: text.length };
          },
        },
      ),
    );
    await h.run({ transforms: host });
    await h.cleanup();
    expect(text).toBe('10\n20\n');
    expect(h.logs).toContainEqual(
      expect.objectContaining({
        step: 't',
        message: expect.stringMatching(/^DuckDB wrote the result as CSV for COPY \(2 rows/),
      }),
    );
    expect(pid).toBeGreaterThan(0);
    // DuckDB's library is mapped in the child.
    expect(maps).toContain('libduckdb');
    await until(() => host.pid === null && !alive(pid), 'the idle child to stop');
    const again = await runOnce(host, 'SELECT id + 1 AS x FROM s ORDER BY id');
    expect(again.got).toEqual([[2], [3]]);
    expect(host.pid).not.toBe(pid);
  }, 60_000);

  it('starts its child when a run with a transform starts; a start keeps a child that was about to stop', async () => {
    const host = newHost(2000);
    host.warm();
    const pid = host.pid!;
    expect(pid).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 1200));
    host.warm();
    await new Promise((r) => setTimeout(r, 1200));
    // 2.4 s after the first start, 1.2 s after the second: the idle spell began again.
    expect(host.pid).toBe(pid);
    expect(alive(pid)).toBe(true);
    await until(() => host.pid === null && !alive(pid), 'the idle child to stop');
  }, 60_000);

  it('fails a run whose child died with TRANSFORM_FAILED, and runs the next in a new child', async () => {
    const host = newHost();
    const running = rejection(runOnce(host, SLOW));
    await until(() => host.pid !== null, 'the child to start');
    const pid = host.pid!;
    // Busy in DuckDB: the query is under way.
    await new Promise((r) => setTimeout(r, 1500));
    process.kill(pid, 'SIGKILL');
    const err = await running;
    expect(err).toMatchObject({ code: 'TRANSFORM_FAILED', step: 't' });
    expect(err.message).toBe('transform t: its DuckDB process ended (SIGKILL)');
    const next = await runOnce(host, 'SELECT count(*)::INTEGER AS n FROM s');
    expect(next.got).toEqual([[2]]);
    expect(host.pid).not.toBe(pid);
  }, 60_000);

  it('fails a run at once when its child cannot be started', async () => {
    const host = transformHost(() =>
      fork(fileURLToPath(import.meta.url), [], { execPath: '/nonexistent/node', serialization: 'advanced' }),
    );
    hosts.push(host);
    const err = await rejection(runOnce(host, 'SELECT id FROM s'));
    expect(err).toMatchObject({ code: 'TRANSFORM_FAILED', step: 't' });
    expect(err.message).toBe('transform t: its DuckDB process could not start (ENOENT)');
  }, 60_000);

  it('cancels a transform in its child and keeps the child for the next run', async () => {
    const host = newHost();
    const cancel = new AbortController();
    const running = rejection(runOnce(host, SLOW, cancel.signal));
    await until(() => host.pid !== null, 'the child to start');
    const pid = host.pid!;
    await new Promise((r) => setTimeout(r, 1500));
    cancel.abort();
    const err = await running;
    expect(err.code).toBe('CANCELED');
    const next = await runOnce(host, 'SELECT max(id) AS n FROM s');
    expect(next.got).toEqual([[2]]);
    expect(host.pid).toBe(pid);
  }, 60_000);
});
