import pg from 'pg';

// For the COPY tests: a database of their own on the test server (SLUICE_TEST_PG_URL, else the
// local one), made anew before them and dropped after, and clients connected to it.

const ADMIN_URL = process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export type ScratchDatabase = {
  /** Its connection string, for a client a test ends (or destroys) itself. */
  url: string;
  /** A client of the database, connected; `drop` ends it. */
  connect(): Promise<pg.Client>;
  /** Ends every client it connected, then drops the database. */
  drop(): Promise<void>;
};

export async function scratchDatabase(name: string): Promise<ScratchDatabase> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const clients: pg.Client[] = [];
  return {
    url: url.toString(),
    async connect() {
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      clients.push(client);
      return client;
    },
    async drop() {
      for (const client of clients) await client.end();
      await admin.query(`DROP DATABASE IF EXISTS ${name}`);
      await admin.end();
    },
  };
}
