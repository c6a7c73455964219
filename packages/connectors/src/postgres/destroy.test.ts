import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { destroy } from './connect';

// A session torn down (a canceled run, a deadline, an idle copy) has its statement stopped on the
// server too: a closed socket alone leaves PostgreSQL running a statement that writes nothing
// (a sort, an aggregate, pg_sleep) until it next writes, on the user's database.

const URL_ = process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const admin = new pg.Client({ connectionString: URL_ });
const ready = admin.connect();
afterAll(() => admin.end());

const activeFor = async (pid: number) => {
  await ready;
  const r = await admin.query(`SELECT state FROM pg_stat_activity WHERE pid = $1`, [pid]);
  return r.rows[0]?.state === 'active';
};

describe('destroying a PostgreSQL session', () => {
  it('stops the statement it was running on the server', async () => {
    const client = new pg.Client({ connectionString: URL_ });
    await client.connect();
    client.on('error', () => {});
    const pid = (await client.query('SELECT pg_backend_pid() AS p')).rows[0].p as number;
    const sleeping = client.query('SELECT pg_sleep(60)');
    sleeping.catch(() => {});
    for (let i = 0; i < 100 && !(await activeFor(pid)); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await activeFor(pid)).toBe(true);
    destroy(client);
    await expect(sleeping).rejects.toThrow();
    let still = true;
    for (let i = 0; i < 100 && still; i++) {
      await new Promise((r) => setTimeout(r, 50));
      still = await activeFor(pid);
    }
    expect(still).toBe(false);
  }, 20_000);
});
