import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tick } from '../../packages/server/src/modules/triggers/trigger-tick';
import { repoRoot } from '../support/cli';
import { deployOrdersPipeline, ordersSpec, pgQuery } from '../support/runs';
import { scratchRuntime } from './support';

// Exactly once across processes: three real processes tick the same injected minutes against
// one PostgreSQL server, over many due occurrences of many schedules; each occurrence gets one
// ledger row, one run and one job. A process SIGKILLed between claiming and committing leaves
// nothing behind, and the next tick decides that occurrence once.

const DB = `sluice_trig_${process.pid}`;
const TRIGGERS = 8;
const MINUTES = 20;
const T0 = '2026-04-01T00:00:00.000Z';

function child(args: string[], env: Record<string, string>) {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(repoRoot, 'test/support/tick-process.ts'), ...args],
    {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  proc.stdout.on('data', (c) => (out += c));
  proc.stderr.on('data', (c) => (err += c));
  const exited = new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
  const waitFor = (re: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => (re.test(out) ? resolve() : undefined);
      proc.stdout.on('data', check);
      proc.on('close', () => reject(new Error(`exited before ${re}: ${out} ${err}`)));
      check();
    });
  return { proc, exited, out: () => out, err: () => err, waitFor };
}

describe('schedule tick across processes', { timeout: 240_000 }, () => {
  let s: Awaited<ReturnType<typeof scratchRuntime>>;
  const q = (text: string, values: unknown[] = []) => pgQuery(DB, text, values);
  const pe = '/organizations/acme/projects/shop/environments/staging';

  beforeAll(async () => {
    s = await scratchRuntime(DB, { env: { SLUICE_TRIGGER_TICK_SECONDS: '0' } });
    await deployOrdersPipeline(s.call as any, {
      apiUrl: 'http://127.0.0.1:9',
      sinkDatabase: 'unused',
      pipeline: 'nightly',
      spec: ordersSpec({ inputs: false }),
    });
    for (let i = 0; i < TRIGGERS; i++) {
      const res = await s.call('POST', `${pe}/pipelines/nightly/triggers`, {
        name: `every minute ${i}`,
        slug: `m${i}`,
        kind: 'schedule',
        schedule: {
          cron: '* * * * *',
          time_zone: i % 2 ? 'Europe/Berlin' : 'America/Santiago',
          overlap: 'allow',
          jitter_seconds: i % 3 === 0 ? 30 : 0,
          catch_up: { policy: 'all', window_seconds: 86400, max_runs: 100 },
        },
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    await q(`update pipeline_triggers set cursor_nominal_at = $1, next_fire_at = $1`, [T0]);
  }, 120_000);
  afterAll(async () => {
    await s?.close();
  }, 60_000);

  it('three processes create each run exactly once', async () => {
    const procs = [0, 1, 2].map(() => child(['ticks', '2026-04-01T00:00:40.000Z', String(MINUTES)], s.env));
    const codes = await Promise.all(procs.map((p) => p.exited));
    expect(codes, procs.map((p) => p.err()).join('\n')).toEqual([0, 0, 0]);
    const startedBy = procs.map((p) => Number(p.out().match(/done (\d+)/)![1]));
    // Minutes 00:01 … 00:19 were due at the last clock (00:19:40); jittered ones may trail.
    const [{ n: occ }] = await q(`select count(*)::int as n from pipeline_trigger_occurrences`);
    const [{ n: runs }] = await q(`select count(*)::int as n from pipeline_runs where trigger = 'schedule'`);
    const [{ n: keys }] = await q(
      `select count(distinct (trigger_id, trigger_key))::int as n from pipeline_runs`,
    );
    const [{ n: jobs }] = await q(`select count(*)::int as n from pgboss.job where name = 'pipelines.run'`);
    expect(occ).toBeGreaterThanOrEqual(TRIGGERS * (MINUTES - 2));
    expect(runs).toBe(occ);
    expect(keys).toBe(runs);
    expect(jobs).toBe(runs);
    expect(startedBy.reduce((a, b) => a + b, 0)).toBe(runs);
    const outcomes = await q(`select distinct outcome from pipeline_trigger_occurrences`);
    expect(outcomes.map((o) => o.outcome)).toEqual(['started']);
    console.info(`runs started per process: ${startedBy.join(', ')} (total ${runs})`);
  });

  it('a process killed between claiming and committing leaves nothing half-done', async () => {
    const at = '2026-04-01T00:25:00.000Z';
    const before = await q(`select (select count(*)::int from pipeline_trigger_occurrences) as o,
      (select count(*)::int from pipeline_runs) as r, (select count(*)::int from pgboss.job where name = 'pipelines.run') as j`);
    const hang = child(['hang', at], s.env);
    await hang.waitFor(/decided m\d+ [1-9]/);
    hang.proc.kill('SIGKILL');
    await hang.exited;
    const after = await q(`select (select count(*)::int from pipeline_trigger_occurrences) as o,
      (select count(*)::int from pipeline_runs) as r, (select count(*)::int from pgboss.job where name = 'pipelines.run') as j`);
    expect(after).toEqual(before);
    // The lock died with the connection; the next tick decides every due occurrence once.
    const r = await tick(s.rt.deps, { clock: () => new Date(at) });
    expect(r.triggers).toBe(TRIGGERS);
    const dup = await q(
      `select trigger_id, trigger_key, count(*)::int as n from pipeline_runs group by 1, 2 having count(*) > 1`,
    );
    expect(dup).toEqual([]);
    const [{ n: runs }] = await q(`select count(*)::int as n from pipeline_runs`);
    const [{ n: occ }] = await q(
      `select count(*)::int as n from pipeline_trigger_occurrences where outcome = 'started'`,
    );
    expect(runs).toBe(occ);
  });
});
