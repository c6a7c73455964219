// Proves the throwaway cluster can be stopped and restarted underneath a client,
// which is what the server's reconnect/fault tests rely on.
import { existsSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type PostgresCluster, startPostgresCluster } from './postgres-cluster';

async function selectOne(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return (await client.query<{ one: number }>('select 1 as one')).rows[0].one;
  } finally {
    await client.end();
  }
}

describe('postgres cluster peer', { timeout: 60_000 }, () => {
  let cluster: PostgresCluster;

  beforeAll(async () => {
    cluster = await startPostgresCluster();
  }, 120_000);
  afterAll(() => cluster?.destroy());

  it('serves queries on its own port', async () => {
    expect(cluster.port).not.toBe(5432);
    expect(cluster.url).toBe(`postgres://postgres@127.0.0.1:${cluster.port}/postgres`);
    expect(await selectOne(cluster.url)).toBe(1);
  });

  it('createDatabase creates a usable database and returns its URL', async () => {
    const url = await createDatabase(cluster.url, 'peer_test_db');
    expect(url).toBe(`postgres://postgres@127.0.0.1:${cluster.port}/peer_test_db`);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query<{ db: string }>('select current_database() as db');
    await client.end();
    expect(rows[0].db).toBe('peer_test_db');
  });

  it('stop makes queries fail with a connection error; start brings them back', async () => {
    // A pool is what the server uses; it must survive the restart without being recreated.
    const pool = new pg.Pool({ connectionString: cluster.url, max: 2 });
    // Idle clients get killed by the shutdown; without a listener pg rethrows that as uncaught.
    pool.on('error', () => {});
    try {
      expect((await pool.query('select 1 as one')).rows[0].one).toBe(1);

      await cluster.stop();
      await expect(selectOne(cluster.url)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      await expect(pool.query('select 1')).rejects.toThrow();

      await cluster.start();
      expect(await selectOne(cluster.url)).toBe(1);
      expect((await pool.query('select 1 as one')).rows[0].one).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it('survives an immediate (crash) stop', async () => {
    await cluster.stop('immediate');
    await expect(selectOne(cluster.url)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await cluster.start();
    expect(await selectOne(cluster.url)).toBe(1);
  });

  it('destroy stops the server and removes its directory', async () => {
    const other = await startPostgresCluster();
    expect(await selectOne(other.url)).toBe(1);
    expect(existsSync(other.dir)).toBe(true);
    await other.destroy();
    await expect(selectOne(other.url)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(existsSync(other.dir)).toBe(false);
  });
});
