// Counts the statements this process sends through `pg` (every Client.query, pools included:
// the platform database, pg-boss and the connectors' data sessions alike). Loaded by
// latency.bench.ts in its own process and with `--import` into the workers it starts; with
// BENCH_STATS_DIR set, a process writes its count to <dir>/<pid>.json every 200 ms and on exit.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const pg = require('pg');
const counts = { statements: 0 };
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(...args) {
  // The bench's own queries (pipeline-support.ts `sql`) are not a run's cost.
  if (this.connectionParameters?.application_name !== 'sluice-bench') counts.statements++;
  return query.apply(this, args);
};
globalThis.__benchStatements = counts;

const dir = process.env.BENCH_STATS_DIR;
if (dir) {
  const write = () => {
    try {
      fs.writeFileSync(path.join(dir, `${process.pid}.json`), JSON.stringify(counts));
    } catch {
      // the bench removed its directory
    }
  };
  setInterval(write, 200).unref();
  process.on('exit', write);
}
