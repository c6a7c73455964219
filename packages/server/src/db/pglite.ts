import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import type { PGlite } from '@electric-sql/pglite';
import { acquireDataDirLock } from './lock';

/** The PostgreSQL major version inside the PGlite we ship (0.4.x: PostgreSQL 17). */
export const PG_MAJOR = '17';

/**
 * The data directory was written by another PostgreSQL major version (an older or newer sluice
 * release); opening it would fail or damage it.
 */
export class DataDirVersionError extends Error {
  constructor(
    readonly dir: string,
    readonly found: string,
  ) {
    super(
      found
        ? `the embedded store in ${dir} was created by PostgreSQL ${found}; this sluice runs ` +
            `PostgreSQL ${PG_MAJOR} and leaves it untouched: open it with the sluice release that ` +
            'created it (export what you need), or point SLUICE_DATA_DIR at a new directory'
        : `the embedded store in ${dir} has a pgdata folder that is not a PostgreSQL data directory ` +
            '(no PG_VERSION); sluice leaves it untouched: move it aside to start a new store',
    );
  }
}

/**
 * Server settings on PostgreSQL's command line (they win over postgresql.conf). PGlite's own
 * defaults are sized for a server (shared_buffers=128MB and more); one embedded connection needs
 * a fraction of that. PGlite zero-fills PostgreSQL's shared memory inside its WebAssembly memory
 * at start, so every MB of shared_buffers is a resident MB from the first second: 16MB → 4MB is
 * 12 MB less (docs/benchmarks.md, Memory). Pages that do not fit are read again through the
 * file system (the kernel's page cache), as on a server with a small buffer pool.
 */
const MEMORY_SETTINGS = [
  'shared_buffers=4MB',
  'max_connections=10',
  'wal_buffers=512kB',
  'temp_buffers=2MB',
  'work_mem=4MB',
  'maintenance_work_mem=16MB',
];

/** PGlite's own start parameters with MEMORY_SETTINGS (also the bench's bare-PGlite baseline). */
export async function startParams(): Promise<string[]> {
  const { PGlite } = await import('@electric-sql/pglite');
  return [...PGlite.defaultStartParams, ...MEMORY_SETTINGS.flatMap((s) => ['-c', s])];
}

/**
 * PGlite 0.3 kept its tables in `template1` and 0.4 defaults to `postgres`: naming it keeps the
 * data of existing directories (and new ones are laid out the same way).
 */
const DATABASE = 'template1';

/** The major version a data directory was created by ('' when it has none: not a cluster yet). */
function pgVersion(pgdata: string): string {
  try {
    return fs.readFileSync(path.join(pgdata, 'PG_VERSION'), 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
}

/**
 * The cluster `npm install` prepared for first starts (scripts/pgdata-template.mjs), when it was
 * made by the PGlite installed now: copying it takes a fraction of a second where initdb takes
 * several (docs/operations.md "Embedded store or PostgreSQL server").
 */
function pgdataTemplate(): string | null {
  const template = fileURLToPath(new URL('../../.pgdata-template/', import.meta.url));
  try {
    const made = JSON.parse(fs.readFileSync(path.join(template, 'template.json'), 'utf8'));
    const dist = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
    const installed = JSON.parse(fs.readFileSync(path.join(dist, '../package.json'), 'utf8'));
    return made.pglite === installed.version && made.pgMajor === PG_MAJOR
      ? path.join(template, 'pgdata')
      : null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Fills `pgdata.partial-<pid>` with a new cluster (a copy of the template, or initdb in a child
 * process) and renames it into place once complete, so a crash leaves no half-made cluster where
 * the store looks for one. The caller holds the data directory lock: any other partial directory
 * is a leftover.
 */
async function createCluster(dir: string, pgdata: string): Promise<void> {
  for (const name of fs.readdirSync(dir)) {
    if (name.startsWith('pgdata.partial-')) fs.rmSync(path.join(dir, name), { recursive: true, force: true });
  }
  const partial = path.join(dir, `pgdata.partial-${process.pid}`);
  const template = pgdataTemplate();
  if (template) await copyTree(template, partial);
  else await initdb(dir, partial, await startParams());
  if (pgVersion(partial) !== PG_MAJOR) {
    fs.rmSync(partial, { recursive: true, force: true });
    throw new Error(
      `creating the embedded store in ${dir} failed: the new cluster has no PG_VERSION ${PG_MAJOR}`,
    );
  }
  // An empty pgdata (made by hand, or by an interrupted older release) gives way.
  fs.rmSync(pgdata, { recursive: true, force: true });
  fs.renameSync(partial, pgdata);
}

/** Files copied at once: enough to keep libuv's four threads busy. */
const COPY_CONCURRENCY = 8;

/**
 * Copies the template's cluster (~1,300 files, most of them small): the folders first, then the
 * files, several at a time. The cost is the kernel creating each file, and `fs.promises.cp`
 * waits for one file's stat, copy and chmod before it starts the next (docs/benchmarks.md,
 * Memory / first start).
 */
async function copyTree(from: string, to: string): Promise<void> {
  const files: string[] = [];
  const walk = (rel: string) => {
    fs.mkdirSync(path.join(to, rel), { mode: 0o700 });
    for (const entry of fs.readdirSync(path.join(from, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) walk(child);
      else files.push(child);
    }
  };
  walk('');
  let next = 0;
  const copyNext = async (): Promise<void> => {
    while (next < files.length) {
      const file = files[next++];
      await fs.promises.copyFile(path.join(from, file), path.join(to, file));
    }
  };
  await Promise.all(Array.from({ length: COPY_CONCURRENCY }, copyNext));
}

/** Runs initdb into `partial` in a child process (its peak memory is never this process's). */
async function initdb(dir: string, partial: string, params: string[]): Promise<void> {
  const script = fileURLToPath(new URL('./pglite-initdb.mjs', import.meta.url));
  const child = spawn(process.execPath, ['--liftoff-only', script, partial, JSON.stringify(params)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    if (stderr.length < 8_000) stderr += s;
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c, signal) => resolve(signal ? null : c));
  });
  if (code !== 0) {
    fs.rmSync(partial, { recursive: true, force: true });
    throw new Error(
      `creating the embedded store in ${dir} failed: ${stderr.trim() || `initdb exited ${code}`}`,
    );
  }
}

/**
 * PGlite's WebAssembly, compiled while a first start copies the new cluster (V8 compiles on its
 * own threads, the copy waits for the kernel's), for the PGlite that opens it next.
 */
let compiledAhead: Promise<WebAssembly.Module> | null = null;

/**
 * Makes `<dir>/pgdata` when there is none yet (a first start); refuses one of another PostgreSQL
 * major version. The caller holds the data directory lock.
 */
async function ensureCluster(dir: string): Promise<void> {
  const pgdata = path.join(dir, 'pgdata');
  const version = pgVersion(pgdata);
  if (version !== '' && version !== PG_MAJOR) throw new DataDirVersionError(dir, version);
  if (version !== '') return;
  const leftovers = fs.existsSync(pgdata) ? fs.readdirSync(pgdata) : [];
  if (leftovers.length > 0) throw new DataDirVersionError(dir, '');
  // Set before the module compiles (see openPgliteCluster).
  v8.setFlagsFromString('--liftoff-only');
  if (!compiledAhead) {
    compiledAhead = compilePgliteWasm();
    // Awaited by openPgliteCluster; a failure shows there, as PGlite's own compile would.
    compiledAhead.catch(() => {});
  }
  await createCluster(dir, pgdata);
}

/**
 * A first start's cluster, made before the store opens: `sluice serve` calls this before it
 * loads the rest of the server, so the copy of the template (the kernel's work) runs while the
 * server's modules load (the main thread's). Takes the data directory lock while it works;
 * nothing to do when the cluster exists. Errors are openPgliteCluster's to report.
 */
export async function prepareCluster(dataDir: string): Promise<void> {
  const dir = path.resolve(dataDir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (pgVersion(path.join(dir, 'pgdata')) !== '') return;
  const lock = acquireDataDirLock(dir);
  try {
    await ensureCluster(dir);
  } finally {
    lock.release();
  }
}

/**
 * Opens (creating on first start) the PostgreSQL cluster in `<dir>/pgdata`. The caller holds
 * the data directory lock.
 */
export async function openPgliteCluster(dir: string): Promise<PGlite> {
  // PGlite's WebAssembly is compiled by V8's baseline compiler only: the optimizing tier keeps
  // a second copy of the hot code and its compile work resident (60–130 MB), and on this
  // query mix it used more CPU, not less (docs/benchmarks.md, Memory). Set before the module
  // compiles; it applies to WebAssembly compiled afterwards in this process.
  v8.setFlagsFromString('--liftoff-only');
  const params = await startParams();
  await ensureCluster(dir);
  // Loaded only for the embedded store: a process on PostgreSQL never needs PGlite.
  const { PGlite } = await import('@electric-sql/pglite');
  const compiled = compiledAhead;
  compiledAhead = null;
  const pgliteWasmModule = compiled ? await compiled : undefined;
  return PGlite.create(path.join(dir, 'pgdata'), {
    database: DATABASE,
    startParams: params,
    pgliteWasmModule,
  });
}

/** Node's WebAssembly global, which the project's lib (no DOM) types only as a namespace. */
const wasm = (
  globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WebAssembly.Module> } }
).WebAssembly;

/** PGlite's WebAssembly module, compiled from the file it would read itself. */
async function compilePgliteWasm(): Promise<WebAssembly.Module> {
  const dist = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  return wasm.compile(await fs.promises.readFile(path.join(dist, 'pglite.wasm')));
}
