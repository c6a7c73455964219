// Prepares the template an embedded store's first start copies instead of running initdb
// (docs/operations.md "Embedded store or PostgreSQL server"): packages/server/.pgdata-template,
// made by `npm install` (the root `prepare`) once per installed PGlite version, migrations,
// pg-boss version and job queues. initdb runs here in a child process, as on a first start without
// a template (src/db/pglite.ts); then the server's own migrations, pg-boss's schema and the jobs'
// queues are applied to it (src/db/migrate.ts, src/jobs/queue.ts), so a first start has only what
// was added since to migrate (~2 s of CPU less, docs/benchmarks.md, Memory), and initdb's two
// databases the store never opens are dropped (fewer files for a first start to copy). Nothing instance-specific is in it:
// keys and the setup code are made by the first start. Nothing to do when the template is current.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const template = path.join(serverDir, '.pgdata-template');
const pgliteDist = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
const pglite = JSON.parse(fs.readFileSync(path.join(pgliteDist, '../package.json'), 'utf8')).version;

const pgBoss = createRequire(import.meta.url)('pg-boss/package.json').version;
const journal = path.join(serverDir, 'src/db/migrations/meta/_journal.json');
const migrations = JSON.parse(fs.readFileSync(journal, 'utf8')).entries.at(-1)?.tag ?? '';

// The server's sources, as `sluice` runs them without a build (bin/sluice.mjs).
const { register } = await import('tsx/esm/api');
register();
const { jobDefinitions } = await import('../src/jobs/catalog.ts');
// The job queues as the server makes them (jobs/queue.ts): each is a table and seven indexes,
// which a first start would otherwise create (~0.4 s). A changed definition makes a new template.
/** What the template holds besides the migrations: the job queues, and template1 alone. */
const layout = 'template1-only';
const queues = crypto
  .createHash('sha256')
  .update(JSON.stringify(jobDefinitions.map(({ name, policy }) => [name, policy])))
  .digest('hex')
  .slice(0, 16);

const marker = path.join(template, 'template.json');
const made = fs.existsSync(marker) ? JSON.parse(fs.readFileSync(marker, 'utf8')) : null;
if (
  made?.pglite === pglite &&
  made.migrations === migrations &&
  made.pgBoss === pgBoss &&
  made.queues === queues &&
  made.layout === layout
)
  process.exit(0);

const staging = `${template}.partial-${process.pid}`;
fs.rmSync(staging, { recursive: true, force: true });
fs.mkdirSync(staging, { recursive: true });
const { PGlite } = await import('@electric-sql/pglite');
const initdb = spawnSync(
  process.execPath,
  [
    '--liftoff-only',
    path.join(serverDir, 'src/db/pglite-initdb.mjs'),
    path.join(staging, 'pgdata'),
    JSON.stringify(PGlite.defaultStartParams),
  ],
  { stdio: ['ignore', 'ignore', 'inherit'] },
);
const versionFile = path.join(staging, 'pgdata/PG_VERSION');
const pgMajor = fs.existsSync(versionFile) ? fs.readFileSync(versionFile, 'utf8').trim() : '';
if (initdb.status !== 0 || !pgMajor) {
  fs.rmSync(staging, { recursive: true, force: true });
  throw new Error(`initdb for the embedded store template failed (exit ${initdb.status})`);
}
const { openStore } = await import('../src/db/client.ts');
const { migrate } = await import('../src/db/migrate.ts');
const { openQueue } = await import('../src/jobs/queue.ts');
const store = await openStore({ dataDir: staging });
try {
  await migrate(store);
  // pg-boss's schema and the jobs' queues; every start makes the ones still missing (jobs/queue.ts).
  const queue = await openQueue(store, { pollSeconds: 60, supervise: false, jobs: jobDefinitions });
  await queue.stop();
  // The store lives in template1 (src/db/pglite.ts); initdb's two other databases are never
  // opened, and are ~600 of the ~1,430 files every first start would otherwise copy.
  for (const statement of [
    'drop database postgres',
    'alter database template0 is_template false',
    'drop database template0',
  ])
    await store.executeSql(statement);
} finally {
  await store.close();
}
fs.writeFileSync(
  path.join(staging, 'template.json'),
  `${JSON.stringify({ pglite, pgMajor, migrations, pgBoss, queues, layout })}\n`,
);
fs.rmSync(template, { recursive: true, force: true });
fs.renameSync(staging, template);
console.log(`sluice: embedded store template (PGlite ${pglite}, PostgreSQL ${pgMajor}) in ${template}`);
