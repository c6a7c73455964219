import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite as PGlite03 } from 'pglite-0.3';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../../test/support/cli';
import { jobDefinitions } from '../jobs/catalog';
import { openStore } from './client';
import { migrationsFolder } from './migrate';
import { DataDirVersionError } from './pglite';

// The embedded store's data directory across PGlite releases: one written by the release we
// shipped before (PGlite 0.3, PostgreSQL 17) keeps its data, one of another PostgreSQL major
// version is refused untouched, and a first start creates it.
describe('embedded store data directory', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-pgdata-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('opens a data directory created by PGlite 0.3 with its data', async () => {
    const dir = tempDir();
    const old = await PGlite03.create(path.join(dir, 'pgdata'));
    await old.exec(`create table kept (id int primary key, note text);
      insert into kept values (1, 'written by PGlite 0.3'), (2, 'ünïcode ✓');`);
    await old.close();

    const store = await openStore({ dataDir: dir });
    try {
      const { rows } = await store.executeSql('select id, note from kept order by id');
      expect(rows).toEqual([
        { id: 1, note: 'written by PGlite 0.3' },
        { id: 2, note: 'ünïcode ✓' },
      ]);
      await store.executeSql('insert into kept values ($1, $2)', [3, 'written by PGlite 0.4']);
      const { rows: settings } = await store.executeSql(
        `select current_database() as db, current_setting('shared_buffers') as shared_buffers,
                current_setting('server_version_num')::int / 10000 as major`,
      );
      expect(settings).toEqual([{ db: 'template1', shared_buffers: '4MB', major: 17 }]);
    } finally {
      await store.close();
    }
    // Reopened, both releases' rows are there.
    const again = await openStore({ dataDir: dir });
    try {
      const { rows } = await again.executeSql('select count(*)::int as n from kept');
      expect(rows).toEqual([{ n: 3 }]);
    } finally {
      await again.close();
    }
  });

  it('refuses a data directory of another PostgreSQL major version, untouched, exit 3', async () => {
    const dir = tempDir();
    const pgdata = path.join(dir, 'pgdata');
    fs.mkdirSync(pgdata);
    fs.writeFileSync(path.join(pgdata, 'PG_VERSION'), '18\n');
    fs.writeFileSync(path.join(pgdata, 'postgresql.conf'), '# of a newer release\n');

    const err = await openStore({ dataDir: dir }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DataDirVersionError);
    expect((err as Error).message).toContain(`the embedded store in ${dir} was created by PostgreSQL 18`);
    expect(fs.readdirSync(pgdata).sort()).toEqual(['PG_VERSION', 'postgresql.conf']);
    expect(fs.readFileSync(path.join(pgdata, 'PG_VERSION'), 'utf8')).toBe('18\n');
    expect(fs.existsSync(path.join(dir, 'sluice.lock'))).toBe(false);

    // As a user meets it: the store-unavailable exit code and the same sentence.
    const r = await runCli(['migrate'], { env: { SLUICE_DATA_DIR: dir } });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('was created by PostgreSQL 18; this sluice runs PostgreSQL 17');
    expect(fs.readdirSync(pgdata).sort()).toEqual(['PG_VERSION', 'postgresql.conf']);
  });

  it('creates the data directory on first start, and leaves no partial directory behind', async () => {
    const dir = path.join(tempDir(), 'new', 'store');
    const store = await openStore({ dataDir: dir });
    try {
      await store.executeSql('create table t (id int)');
      await store.executeSql('insert into t values ($1)', [7]);
    } finally {
      await store.close();
    }
    expect(fs.readFileSync(path.join(dir, 'pgdata', 'PG_VERSION'), 'utf8').trim()).toBe('17');
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('pgdata.partial-'))).toEqual([]);

    const again = await openStore({ dataDir: dir });
    try {
      expect((await again.executeSql('select id from t')).rows).toEqual([{ id: 7 }]);
    } finally {
      await again.close();
    }
  });

  it('copies the template `npm install` prepared on a first start instead of running initdb', async () => {
    // The template's script is what the root `prepare` runs; it does nothing when it is current.
    const script = fileURLToPath(new URL('../../scripts/pgdata-template.mjs', import.meta.url));
    execFileSync(process.execPath, [script], { stdio: 'ignore' });
    const template = fileURLToPath(new URL('../../.pgdata-template/', import.meta.url));
    const made = JSON.parse(fs.readFileSync(path.join(template, 'template.json'), 'utf8'));
    expect(made.pgMajor).toBe('17');
    // pg_control begins with the cluster's system identifier (a little-endian uint64), which
    // initdb draws anew for every cluster: the same one means the store is the template's copy.
    const templateId = fs.readFileSync(path.join(template, 'pgdata/global/pg_control')).readBigUInt64LE(0);

    const dir = tempDir();
    const store = await openStore({ dataDir: dir });
    try {
      const { rows } = await store.executeSql(
        'select system_identifier::text as id from pg_control_system()',
      );
      expect(BigInt(rows[0].id)).toBe(templateId);
      // The template is migrated already (the server's migrations and pg-boss's schema), with
      // nothing instance-specific in it: the first start makes the keys.
      const journal = JSON.parse(
        fs.readFileSync(path.join(migrationsFolder, 'meta/_journal.json'), 'utf8'),
      ).entries;
      expect(made.migrations).toBe(journal.at(-1).tag);
      const applied = await store.executeSql('select count(*)::int as n from drizzle.__drizzle_migrations');
      expect(applied.rows).toEqual([{ n: journal.length }]);
      const boss = await store.executeSql("select to_regclass('pgboss.job') is not null as made");
      expect(boss.rows).toEqual([{ made: true }]);
      // The jobs' queues too, and only the database the store uses (fewer files to copy).
      const queues = await store.executeSql('select name from pgboss.queue order by name');
      expect(queues.rows.map((r) => r.name)).toEqual(jobDefinitions.map((j) => j.name).sort());
      const databases = await store.executeSql('select datname from pg_database');
      expect(databases.rows).toEqual([{ datname: 'template1' }]);
      const keys = await store.executeSql(
        'select (select count(*) from encryption_keys)::int + (select count(*) from proof_signing_keys)::int as n',
      );
      expect(keys.rows).toEqual([{ n: 0 }]);
      await store.executeSql('create table t (id int)');
    } finally {
      await store.close();
    }
    // The copy is the store's own: a later first start copies the template unchanged.
    const again = await openStore({ dataDir: tempDir() });
    try {
      expect((await again.executeSql("select to_regclass('t') as t")).rows).toEqual([{ t: null }]);
    } finally {
      await again.close();
    }
  });
});
