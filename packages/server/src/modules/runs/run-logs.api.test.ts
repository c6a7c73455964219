import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../../../test/support/app';
import { startShop } from '../../../../../test/support/runs-shop';
import { insertLogs, type LogLine } from './run-progress.repo';

// A run's log stored in batches (docs/operations.md#run-logs): lines written together share a
// row, a write of more than 500 lines is split, and the API still numbers and pages line by line
// in both orders and both directions, with cursors that fall inside a batch.

describe('run log batches', () => {
  let t: TestApp;
  let owner: string;
  let pe: string;
  let runId: string;
  // The lines start when the run does: a write looks for the run's last line only from a day
  // before the run was created (run-progress.repo.ts), so a fixed date would age out of it.
  const t0 = Math.floor(Date.now() / 1000) * 1000;

  beforeAll(async () => {
    const shop = await startShop();
    ({ t, owner, pe } = shop);
    const res = await shop.execute('orders-sync', { run_slug: 'batched', input: { region: 'eu' } });
    expect(res.statusCode, res.body).toBe(202);
    runId = (await shop.runRow('batched')).id;
    // 1,234 lines in one write (three rows: 500, 500, 234), then 7 more in another, each line
    // 3 ms after the one before, steps and levels varying.
    const lines = (from: number, n: number): LogLine[] =>
      Array.from({ length: n }, (_, i) => ({
        stepSlug: (from + i) % 3 === 0 ? null : `step-${(from + i) % 2}`,
        level: ['info', 'warn', 'error'][(from + i) % 3] as string,
        message: `line ${from + i}`,
        at: new Date(t0 + (from + i) * 3),
      }));
    await insertLogs(t.rt.deps.db, runId, lines(1, 1234));
    await insertLogs(t.rt.deps.db, runId, lines(1235, 7));
  });
  afterAll(() => t?.close());

  const expected = (seq: number) => ({
    seq,
    step_slug: seq % 3 === 0 ? null : `step-${seq % 2}`,
    level: ['info', 'warn', 'error'][seq % 3],
    message: `line ${seq}`,
    at: new Date(t0 + seq * 3).toISOString(),
  });
  const all = Array.from({ length: 1241 }, (_, i) => expected(i + 1));

  async function page(qs: string) {
    const res = await t.call('GET', `${pe}/runs/batched/logs?${qs}`, { token: owner });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }

  async function walk(order: 'asc' | 'desc', limit: number) {
    const seen: unknown[] = [];
    let cursor: string | null = null;
    do {
      const p: any = await page(
        `limit=${limit}&order=${order}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      seen.push(...p.logs);
      cursor = p.has_more ? p.next_cursor : null;
    } while (cursor);
    return seen;
  }

  it('stores a write as rows of at most 500 consecutive lines', async () => {
    const rows = await t.rt.deps.store.executeSql(
      'select seq, last_seq, jsonb_array_length(lines) as n from pipeline_run_logs where run_id = $1 order by seq',
      [runId],
    );
    expect(rows.rows).toEqual([
      { seq: 1, last_seq: 500, n: 500 },
      { seq: 501, last_seq: 1000, n: 500 },
      { seq: 1001, last_seq: 1234, n: 234 },
      { seq: 1235, last_seq: 1241, n: 7 },
    ]);
    const view = await t.rt.deps.store.executeSql(
      'select seq, message from pipeline_run_log_lines where run_id = $1 and seq in (500, 501, 1241) order by seq',
      [runId],
    );
    expect(view.rows).toEqual([
      { seq: 500, message: 'line 500' },
      { seq: 501, message: 'line 501' },
      { seq: 1241, message: 'line 1241' },
    ]);
  });

  it('pages every line once, in order, across batch boundaries, both ways', async () => {
    expect(await walk('asc', 97)).toEqual(all);
    expect(await walk('desc', 97)).toEqual([...all].reverse());
    // The widest page: every fifth one crosses a batch's end.
    expect(await walk('desc', 100)).toEqual([...all].reverse());
  });

  it('reads back from a cursor inside a batch (direction=prev)', async () => {
    // Forward to line 700, then back a page from its cursor: lines 690–699.
    let p: any = await page('limit=100&order=asc');
    for (let i = 0; i < 6; i++)
      p = await page(`limit=100&order=asc&cursor=${encodeURIComponent(p.next_cursor)}`);
    expect(p.logs[0].seq).toBe(601);
    expect(p.logs.at(-1).seq).toBe(700);
    const back = await page(`limit=10&order=asc&direction=prev&cursor=${encodeURIComponent(p.prev_cursor)}`);
    expect(back.logs).toEqual(all.slice(590, 600));
    // Newest first to line 1,002, then on past the third batch's first line, then back.
    let d: any = await page('limit=100&order=desc');
    d = await page(`limit=100&order=desc&cursor=${encodeURIComponent(d.next_cursor)}`);
    d = await page(`limit=40&order=desc&cursor=${encodeURIComponent(d.next_cursor)}`);
    expect(d.logs.at(-1).seq).toBe(1002);
    const next = await page(`limit=2&order=desc&cursor=${encodeURIComponent(d.next_cursor)}`);
    expect(next.logs.map((l: any) => l.seq)).toEqual([1001, 1000]);
    const prev = await page(
      `limit=3&order=desc&direction=prev&cursor=${encodeURIComponent(next.prev_cursor)}`,
    );
    expect(prev.logs.map((l: any) => l.seq)).toEqual([1004, 1003, 1002]);
  });
});
