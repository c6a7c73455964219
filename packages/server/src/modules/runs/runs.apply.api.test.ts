import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import {
  createSinkDatabase,
  deployOrdersPipeline,
  pgQuery,
  terminal,
  waitUntil,
} from '../../../../../test/support/runs';

// A pipeline whose source hands on change rows (a PostgreSQL query of literal rows, in the shape
// a cdc source gives: docs/pipeline-spec.md, "apply: change rows") into a PostgreSQL sink in
// mode apply, run end to end by the in-process worker; and validation's APPLY_NEEDS_KEY.

const SINK_DB = `sluice_apply_sink_${process.pid}_${randomBytes(3).toString('hex')}`;

const CHANGES = `SELECT _op, _table, _position, _committed_at, _unchanged, id, name, doc FROM (VALUES
  (1, 'insert', 'public.items', '0/1', '2026-01-05T10:00:00Z', NULL, 1, 'a', 'kept'),
  (2, 'insert', 'public.items', '0/2', '2026-01-05T10:00:00Z', NULL, 2, 'b', 'x'),
  (3, 'update', 'public.items', '0/3', '2026-01-05T10:00:01Z', '["doc"]', 1, 'a2', NULL),
  (4, 'delete', 'public.items', '0/4', '2026-01-05T10:00:02Z', NULL, 2, NULL, NULL),
  (5, 'insert', 'public.items', '0/5', '2026-01-05T10:00:03Z', NULL, 3, 'c', 'y'),
  (6, 'update', 'public.items', '0/6', '2026-01-05T10:00:04Z', '["doc"]', 9, 'old', NULL),
  (7, 'delete', 'public.items', '0/7', '2026-01-05T10:00:05Z', NULL, 8, NULL, NULL)
) AS c(n, _op, _table, _position, _committed_at, _unchanged, id, name, doc) ORDER BY n`;

const spec = (write: Record<string, unknown>) => ({
  steps: [
    {
      slug: 'changes',
      kind: 'source',
      data_source_ref: 'warehouse',
      operation: { operation_type: 'sql', sql: CHANGES },
    },
    {
      slug: 'replica',
      kind: 'sink',
      data_source_ref: 'warehouse',
      operation: { operation_type: 'sql', write },
    },
  ],
  edges: [{ from: 'changes', to: 'replica' }],
});

describe('runs: change rows into an apply sink', () => {
  let t: TestApp;
  let owner: string;
  let pe: string;
  let sink: { drop(): Promise<unknown> };
  const call = (method: string, url: string, body?: unknown) => t.call(method, url, { token: owner, body });
  const getRun = async (slug: string) => (await call('GET', `${pe}/runs/${slug}`)).json();

  beforeAll(async () => {
    sink = await createSinkDatabase(SINK_DB);
    await pgQuery(SINK_DB, 'CREATE TABLE items (id int PRIMARY KEY, name text, doc text NOT NULL)');
    await pgQuery(SINK_DB, `INSERT INTO items VALUES (8, 'gone', 'd8'), (9, 'nine', 'd9')`);
    t = await startTestApp({ worker: true });
    owner = (await t.bootstrap('acme')).api_key;
    ({ pe } = await deployOrdersPipeline((m, u, b) => call(m, u, b), {
      apiUrl: 'http://127.0.0.1:9',
      sinkDatabase: SINK_DB,
      pipeline: 'replica',
      spec: spec({ table: 'items', mode: 'apply', key: ['id'] }),
      bindings: [['warehouse', 'warehouse']],
    }));
  });
  afterAll(async () => {
    await t?.close();
    await sink?.drop();
  });

  it('applies the changes by key: compacted, deletes applied, unchanged columns kept', async () => {
    const res = await call('POST', `${pe}/pipelines/replica:execute`, { run_slug: 'apply-1' });
    expect(res.statusCode, res.body).toBe(202);
    const run = await waitUntil(() => getRun('apply-1'), terminal, 30_000);
    expect(run.state, JSON.stringify(run)).toBe('succeeded');
    expect(run.steps.find((s: any) => s.step_slug === 'replica').rows_out).toBe(7);
    expect(await pgQuery(SINK_DB, 'SELECT id, name, doc FROM items ORDER BY id')).toEqual([
      { id: 1, name: 'a2', doc: 'kept' },
      { id: 3, name: 'c', doc: 'y' },
      { id: 9, name: 'old', doc: 'd9' },
    ]);
    const logs = (await call('GET', `${pe}/runs/apply-1/logs?limit=100`)).json().logs;
    expect(logs.map((l: any) => l.message)).toContain(
      'apply: 7 changes compacted to 3 upserts and 2 deletes',
    );
  });

  it('validation refuses apply without key (APPLY_NEEDS_KEY)', async () => {
    const version = await call('POST', '/organizations/acme/projects/shop/pipelines/replica/versions', {
      spec: spec({ table: 'items', mode: 'apply' }),
    });
    expect(version.statusCode, version.body).toBeLessThan(300);
    const v = await call('POST', `${pe}/pipeline-validation`, {
      pipeline_slug: 'replica',
      spec_hash: version.json().spec_hash,
    });
    expect(v.json().valid).toBe(false);
    expect(v.json().findings).toContainEqual(
      expect.objectContaining({ code: 'APPLY_NEEDS_KEY', path: 'steps[1].operation.write.key' }),
    );
  });
});
