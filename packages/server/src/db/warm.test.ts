import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgQuery, pgUrl } from '../../../../test/support/runs';
import { openStore, type Store } from './client';

// The store's pool opened to its floor at start, each connection warmed by EXPLAIN of the named
// statements the process has sent (db/warm.ts): the floor is open before any request, the other
// connections are warmed once a statement was named on one of them, warming runs nothing (a
// data-modifying statement wrote once, for its one real call), and lost connections are opened
// again.

const DB = `sluice_warm_${process.pid}`;

async function until(check: () => Promise<boolean>, what: string) {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const sessions = () =>
  pgQuery<{ query: string }>(
    'postgres',
    `select query from pg_stat_activity where datname = $1 and backend_type = 'client backend'`,
    [DB],
  );

describe('warm store pool', () => {
  let store: Store;
  beforeAll(async () => {
    await pgQuery('postgres', `create database ${DB}`);
    await pgQuery(DB, 'create table warm_t (id int primary key, note text)');
  });
  afterAll(async () => {
    await store?.close();
    await pgQuery('postgres', `drop database if exists ${DB} with (force)`);
  });

  it('opens the floor at start and warms every connection with the named statements, running none of them', async () => {
    store = await openStore({ databaseUrl: pgUrl(DB), dataDir: '', poolSize: 5, poolMin: 3 });
    expect(await sessions()).toHaveLength(0);
    await store.warmUp();
    expect(await sessions()).toHaveLength(3);

    const write = `with w as (insert into warm_t (id, note) values ($1, $2) returning id) select id from w`;
    const { rows } = await store.prepared('sluice_warm_write', write, [1, 'once']);
    expect(rows).toEqual([{ id: 1 }]);
    // The other two connections plan it (EXPLAIN) soon after; the one that ran it has it prepared.
    await until(
      async () => (await sessions()).filter((s) => s.query === `explain ${write}`).length >= 2,
      'the idle connections to be warmed',
    );
    expect(await pgQuery(DB, 'select id, note from warm_t')).toEqual([{ id: 1, note: 'once' }]);
    // Every connection runs it as before, the floor held.
    const again = await Promise.all(
      [2, 3, 4].map((id) => store.prepared('sluice_warm_write', write, [id, 'again'])),
    );
    expect(again.map((r) => r.rows[0].id).sort()).toEqual([2, 3, 4]);
    expect((await pgQuery(DB, 'select count(*)::int as n from warm_t'))[0].n).toBe(4);
    expect((await sessions()).length).toBeGreaterThanOrEqual(3);
  });

  it('opens lost connections again up to the floor, warm', async () => {
    await pgQuery(
      'postgres',
      `select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and backend_type = 'client backend'`,
      [DB],
    );
    await until(async () => (await sessions()).length >= 3, 'the floor to be open again');
    await until(
      async () => (await sessions()).filter((s) => s.query.startsWith('explain with w as')).length >= 3,
      'the new connections to be warmed',
    );
    const { rows } = await store.prepared(
      'sluice_warm_write',
      `with w as (insert into warm_t (id, note) values ($1, $2) returning id) select id from w`,
      [5, 'after'],
    );
    expect(rows).toEqual([{ id: 5 }]);
    expect((await pgQuery(DB, 'select count(*)::int as n from warm_t'))[0].n).toBe(5);
  });
});
