// Creates an embedded store's PostgreSQL data directory (initdb) in a process of its own, so the
// process that serves never holds initdb's peak memory (a second WebAssembly instance and a tar
// of the new directory: several hundred MB). Run by pglite.ts as
// `node pglite-initdb.mjs <dir> <startParams as JSON>`; exits 0 once <dir> holds a cluster.
import { PGlite } from '@electric-sql/pglite';

const [dir, params] = process.argv.slice(2);
const db = await PGlite.create(dir, { database: 'template1', startParams: JSON.parse(params) });
await db.close();
