import { afterEach, describe, expect, it } from 'vitest';
import { alive } from '../../../../test/support/processes';
import { DuckHost, DuckHostError } from './client';

// The server's DuckDB in a child process (client.ts, host.mjs), started for real.

const hosts: DuckHost[] = [];
const host = (idleMs?: number) => {
  const h = new DuckHost(idleMs);
  hosts.push(h);
  return h;
};
afterEach(() => {
  for (const h of hosts.splice(0)) h.stop();
});

/** Resolves once the process is gone (its parent reaps it), at most `ms` later. */
async function gone(pid: number, ms = 10_000) {
  const until = Date.now() + ms;
  while (alive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  return !alive(pid);
}

describe('the DuckDB child process', () => {
  it('runs statements on a session of its own and answers rows as JSON values', async () => {
    const h = host();
    const s = await h.open();
    await s.run('CREATE TABLE t (a INTEGER, b BIGINT, c VARCHAR, d DATE)');
    await s.run(`INSERT INTO t VALUES (1, 9007199254740993, 'x', DATE '2026-11-30'), (2, NULL, NULL, NULL)`);
    expect(await s.run('SELECT * FROM t ORDER BY a')).toEqual([
      [1, '9007199254740993', 'x', '2026-11-30'],
      [2, null, null, null],
    ]);
    expect(await s.run('DESCRIBE SELECT a, c FROM t')).toEqual([
      ['a', 'INTEGER', 'YES', null, null, null],
      ['c', 'VARCHAR', 'YES', null, null, null],
    ]);
    expect(await s.run('SELECT $1::INTEGER + 1', [41])).toEqual([[42]]);
    // Another session is another database.
    const other = await h.open();
    await expect(other.run('SELECT * FROM t')).rejects.toMatchObject({ code: 'FAILED' });
    s.close();
    other.close();
  });

  it("fails a statement with DuckDB's own message and reaches no file", async () => {
    const s = await host().open();
    const err = await s.run('SELECT nope FROM range(1)').catch((e) => e);
    expect(err).toBeInstanceOf(DuckHostError);
    expect(err.code).toBe('FAILED');
    expect(err.message).toMatch(/Binder Error.*nope/);
    await expect(s.run(`SELECT * FROM read_csv('/etc/passwd')`)).rejects.toThrow(/disabled|Permission/i);
    s.close();
    await expect(s.run('SELECT 1')).rejects.toThrow('the DuckDB session is closed');
  });

  it('serializes SQL with json_serialize_sql on a shared session', async () => {
    const h = host();
    const good = JSON.parse(await h.serialize('SELECT a FROM t'));
    expect(good.error).toBe(false);
    expect(good.statements).toHaveLength(1);
    const bad = JSON.parse(await h.serialize('SELEC a FROM t'));
    expect(bad.error).toBe(true);
    expect(bad.error_message).toMatch(/syntax error/);
  });

  it('stops once idle with no session open, and starts again on the next request', async () => {
    const h = host(50);
    const s = await h.open();
    const first = h.pid!;
    // An open session keeps it: twice the idle time later it is still there.
    await new Promise((r) => setTimeout(r, 120));
    expect(h.pid).toBe(first);
    expect(alive(first)).toBe(true);
    s.close();
    expect(await gone(first)).toBe(true);
    expect(h.pid).toBeNull();
    expect(JSON.parse(await h.serialize('SELECT 1')).error).toBe(false);
    expect(h.pid).not.toBe(first);
  });

  it('fails the requests in flight and the sessions of a child that stopped, and starts a new one', async () => {
    const h = host();
    const s = await h.open();
    const first = h.pid!;
    const long = s.run('SELECT count(*) FROM range(100000000000)');
    await new Promise((r) => setTimeout(r, 50));
    process.kill(first, 'SIGKILL');
    const err = await long.catch((e) => e);
    expect(err).toBeInstanceOf(DuckHostError);
    expect(err.code).toBe('STOPPED');
    expect(err.message).toMatch(/SIGKILL/);
    await expect(s.run('SELECT 1')).rejects.toMatchObject({ code: 'STOPPED' });
    const again = await h.open();
    expect(h.pid).not.toBe(first);
    expect(await again.run('SELECT 1')).toEqual([[1]]);
    again.close();
  });
});
