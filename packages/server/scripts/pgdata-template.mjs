// Prepares the template an embedded store's first start copies instead of running initdb
// (docs/operations.md "Embedded store or PostgreSQL server"): packages/server/.pgdata-template,
// made once per installed PGlite version by `npm install` (the root `prepare`). initdb runs here
// in a child process, as on a first start without a template (src/db/pglite.ts). Nothing to do
// when the template was made by the PGlite installed now.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const template = path.join(serverDir, '.pgdata-template');
const pgliteDist = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
const pglite = JSON.parse(fs.readFileSync(path.join(pgliteDist, '../package.json'), 'utf8')).version;

const marker = path.join(template, 'template.json');
const made = fs.existsSync(marker) ? JSON.parse(fs.readFileSync(marker, 'utf8')) : null;
if (made?.pglite === pglite) process.exit(0);

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
fs.writeFileSync(path.join(staging, 'template.json'), `${JSON.stringify({ pglite, pgMajor })}\n`);
fs.rmSync(template, { recursive: true, force: true });
fs.renameSync(staging, template);
console.log(`sluice: embedded store template (PGlite ${pglite}, PostgreSQL ${pgMajor}) in ${template}`);
