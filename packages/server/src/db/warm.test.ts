import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgQuery, pgUrl } from '../../../../test/support/runs';
import { openStore, type Store } from './client';

// The store's pool opened to its floor at start, each connection warmed by EXPLAIN of the named
// statements the process has sent (db/warm.ts): the floor is open before any request, the other
// connections are warmed once a statement was named on one of them, warming runs nothing (a
// data-modifying statement wrote once, for its one real call), lost connections are opened
// again, and a statement waiting for a connection gets one between two EXPLAINs.

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

  it('opens the floor beside a connection already open and idle', async () => {
    const other = await openStore({ databaseUrl: pgUrl(DB), dataDir: '', poolSize: 3, poolMin: 3 });
    try {
      const before = (await sessions()).length;
      await other.executeSql('select 1');
      expect((await sessions()).length).toBe(before + 1);
      await other.warmUp();
      expect((await sessions()).length).toBe(before + 3);
    } finally {
      await other.close();
    }
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

  it('hands a connection to a waiting statement between two EXPLAINs, and warms it later', async () => {
    const small = await openStore({ databaseUrl: pgUrl(DB), dataDir: '', poolSize: 2, poolMin: 2 });
    await small.warmUp();
    await pgQuery(DB, 'create table warm_locked (id int primary key)');
    const texts = [1, 2, 3, 4, 5].map((k) => `select id + ${k} as n from warm_locked where id = $1`);
    // Every statement sent through pg from here on, in order (the store's pool is pg's).
    const sent: string[] = [];
    const query = pg.Client.prototype.query as (...a: any[]) => any;
    (pg.Client.prototype as any).query = function (this: pg.Client, ...args: any[]) {
      sent.push(typeof args[0] === 'string' ? args[0] : args[0]?.text);
      return query.apply(this, args);
    };
    // The table locked: both connections' first EXPLAIN waits for the lock.
    const locker = new pg.Client({ connectionString: pgUrl(DB) });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table warm_locked in access exclusive mode');
      const warming = small.warmUp(texts.map((text, k) => ({ name: `sluice_warm_locked_${k}`, text })));
      await until(
        async () => (await sessions()).filter((s) => s.query.startsWith('explain select id + 1')).length >= 2,
        'both connections to wait in their first EXPLAIN',
      );
      const waiting = small.executeSql('select 42 as n', []);
      await locker.query('commit');
      expect((await waiting).rows).toEqual([{ n: 42 }]);
      await warming;
      const before = sent.slice(0, sent.indexOf('select 42 as n'));
      // Without the hand-over both connections went through all five first (ten EXPLAINs).
      expect(before.filter((t) => t.startsWith('explain ')).length).toBeLessThanOrEqual(4);
      // The connection handed over learns the rest once idle again: each text planned twice.
      await until(
        async () => sent.filter((t) => t.startsWith('explain select id + 5')).length >= 2,
        'the connection handed over to be warmed',
      );
    } finally {
      (pg.Client.prototype as any).query = query;
      await locker.end();
      await small.close();
    }
  });
});
