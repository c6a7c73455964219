import { describe, expect, it } from 'vitest';
import type { Run, RunLog } from './pipelines-shared';
import { runDisplay } from './runs-follow';

// The three ways `runs watch` shows a run: redrawn in place on a terminal, appended lines
// elsewhere, one JSON object per poll with --json.

const T0 = Date.parse('2026-01-31T12:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

function run(state: Run['state'], loaded: number): Run {
  const done = state === 'succeeded';
  return {
    slug: 'nightly',
    pipeline_slug: 'orders',
    environment_slug: 'staging',
    spec_hash: 'a'.repeat(64),
    state,
    trigger: 'api',
    trigger_slug: null,
    input_keys: [],
    attempt: 1,
    created_at: at(0),
    started_at: at(0),
    finished_at: done ? at(4) : null,
    error: null,
    contract_checks: [],
    steps: [
      {
        step_slug: 'orders',
        state: 'succeeded',
        rows_in: 0,
        rows_out: 5,
        bytes_in: 2048,
        bytes_out: 0,
        started_at: at(0),
        finished_at: at(1),
        error: null,
      },
      {
        step_slug: 'load',
        state: done ? 'succeeded' : 'running',
        rows_in: loaded,
        rows_out: done ? loaded : 0,
        bytes_in: 0,
        bytes_out: 0,
        started_at: at(1),
        finished_at: done ? at(4) : null,
        error: null,
      },
    ],
  };
}

const log: RunLog = { seq: 7, step_slug: 'orders', level: 'info', message: 'GET answered 200', at: at(1) };

function capture(columns?: number) {
  const chunks: string[] = [];
  return { chunks, out: { write: (s: string) => chunks.push(s), columns } };
}

describe('runs watch display', () => {
  it('redraws the steps in place on a terminal, log lines scrolling above them', () => {
    const { chunks, out } = capture(200);
    const d = runDisplay(out, 'tty', () => T0 + 3000);
    d.update(run('running', 2), []);
    d.update(run('running', 5), [log]);
    d.update(run('succeeded', 5), []);
    expect(chunks[0]).toBe(
      [
        'run nightly  orders in staging  running  attempt 1  3.0s',
        '  orders  succeeded  rows in 0 out 5  bytes in 2.0 KiB out 0 B  1.0s',
        '  load    running    rows in 2 out 0  bytes in 0 B out 0 B  2.0s',
        '',
      ].join('\n'),
    );
    // Up over the three lines drawn, clear, the new log line, then the frame again.
    expect(
      chunks[1].startsWith('\x1b[3A\r\x1b[J12:00:01.000 info  orders: GET answered 200\nrun nightly'),
    ).toBe(true);
    expect(
      chunks[2].startsWith('\x1b[3A\r\x1b[Jrun nightly  orders in staging  succeeded  attempt 1  4.0s\n'),
    ).toBe(true);
    expect(chunks[2]).toContain('  load    succeeded  rows in 5 out 5  bytes in 0 B out 0 B  3.0s\n');
  });

  it('cuts frame lines to the terminal width so the redraw stays aligned', () => {
    const { chunks, out } = capture(20);
    runDisplay(out, 'tty', () => T0).update(run('running', 2), []);
    for (const line of chunks[0].trimEnd().split('\n')) expect(line.length).toBeLessThan(20);
  });

  it('appends a step line only when the step changes, and the run line when the run does', () => {
    const { chunks, out } = capture();
    const d = runDisplay(out, 'plain', () => T0 + 3000);
    d.update(run('running', 2), []);
    d.update(run('running', 2), []);
    d.update(run('running', 5), [log]);
    d.update(run('succeeded', 5), []);
    const text = chunks.join('');
    expect(text).not.toContain('\x1b[');
    expect(text.trimEnd().split('\n')).toEqual([
      'run nightly  orders in staging  running  attempt 1  3.0s',
      '  orders  succeeded  rows in 0 out 5  bytes in 2.0 KiB out 0 B  1.0s',
      '  load    running    rows in 2 out 0  bytes in 0 B out 0 B  2.0s',
      '12:00:01.000 info  orders: GET answered 200',
      '  load    running    rows in 5 out 0  bytes in 0 B out 0 B  2.0s',
      '  load    succeeded  rows in 5 out 5  bytes in 0 B out 0 B  3.0s',
      'run nightly  orders in staging  succeeded  attempt 1  4.0s',
    ]);
  });

  it('prints one JSON object per poll with --json', () => {
    const { chunks, out } = capture();
    const d = runDisplay(out, 'json');
    d.update(run('running', 2), [log]);
    d.update(run('succeeded', 5), []);
    expect(chunks).toHaveLength(2);
    expect(JSON.parse(chunks[0])).toMatchObject({ run: { state: 'running' }, logs: [{ seq: 7 }] });
    expect(JSON.parse(chunks[1])).toMatchObject({ run: { state: 'succeeded' }, logs: [] });
  });
});
