import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, commitMessage, showFile } from '../peers/git-repos';
import { type GitSshPeer, startGitSshPeer } from '../peers/git-ssh';
import { pgQuery } from '../support/runs';
import {
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  pgDataSource,
  runToEnd,
  scratchRuntime,
  stepOf,
} from './support';

// Issue 5 acceptance at size, through the API and the worker on the PostgreSQL store: a
// 100,000-row CSV committed in a git repository (over SSH) is loaded into PostgreSQL, and the
// table goes back into the repository as a committed CSV file; every row is accounted for on
// both sides. (The same flows over HTTPS, smaller, run on both stores in git.api.test.ts.)

const N = 100_000;
const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const STORE_DB = `sluice_gitcsv_${id}`;
const SINK_DB = `sluice_gitcsv_dst_${id}`;

const amountOf = (i: number) => `${(i * 7) % 1000}.${String(i % 100).padStart(2, '0')}`;
const csvOf = (n: number) => {
  const lines = ['id,name,amount,note'];
  for (let i = 1; i <= n; i++) lines.push(`${i},name ${i},${amountOf(i)},"a, ""quoted"" note\nline ${i}"`);
  return `${lines.join('\r\n')}\r\n`;
};

describe('git to PostgreSQL and back, 100,000 rows', () => {
  let s: Awaited<ReturnType<typeof scratchRuntime>>;
  let ssh: GitSshPeer;
  let repo: string;

  beforeAll(async () => {
    ssh = await startGitSshPeer();
    repo = ssh.createRepo('big');
    commitFiles(repo, 'main', { 'data/orders.csv': csvOf(N) });
    await pgQuery('postgres', `drop database if exists ${SINK_DB} with (force)`);
    await pgQuery('postgres', `create database ${SINK_DB}`);
    await pgQuery(
      SINK_DB,
      'create table orders (id bigint primary key, name text not null, amount numeric(10,2), note text)',
    );
    s = await scratchRuntime(STORE_DB, { worker: true });
    await createDataSource(s.call, {
      type: 'git',
      name: 'big',
      slug: 'big',
      config: {
        repo_url: ssh.urlOf('big'),
        default_branch: 'main',
        base_path: 'data',
        allow_private_hosts: true,
      },
      credentials: {
        auth_type: 'ssh',
        ssh_private_key: ssh.clientKey.privateKey,
        ssh_known_hosts: ssh.knownHosts,
      },
    });
    await createDataSource(s.call, pgDataSource('warehouse', SINK_DB));
    await createProjectAndEnvironment(s.call);
  }, 180_000);

  afterAll(async () => {
    await s?.close();
    await ssh?.close();
    await pgQuery('postgres', `drop database if exists ${SINK_DB} with (force)`);
  });

  it('loads the file into PostgreSQL and commits the table back as a file', async () => {
    await deployPipeline(s.call, {
      pipeline: 'in',
      spec: {
        steps: [
          {
            slug: 'file',
            kind: 'source',
            data_source_ref: 'repo',
            operation: { operation_type: 'git', path: 'orders.csv' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'warehouse',
            operation: { operation_type: 'sql', write: { table: 'orders', mode: 'insert' } },
          },
        ],
        edges: [{ from: 'file', to: 'load' }],
      },
      bindings: { repo: 'big', warehouse: 'warehouse' },
    });
    const run = await runToEnd(s.call, 'in', { run_slug: 'in-1' }, 240_000);
    expect(run, JSON.stringify(run)).toMatchObject({ state: 'succeeded', error: null });
    expect(stepOf(run, 'load')).toMatchObject({ rows_out: N });
    let cents = 0n;
    for (let i = 1; i <= N; i++) cents += BigInt(((i * 7) % 1000) * 100 + (i % 100));
    const [stats] = await pgQuery(
      SINK_DB,
      `select count(*)::int as n, count(distinct id)::int as ids, sum(id)::text as id_sum,
              (sum(amount) * 100)::bigint::text as cents,
              count(*) filter (where note = 'a, "quoted" note' || chr(10) || 'line ' || id)::int as notes
         from orders`,
    );
    expect(stats).toEqual({
      n: N,
      ids: N,
      id_sum: String((N * (N + 1)) / 2),
      cents: cents.toString(),
      notes: N,
    });

    await deployPipeline(s.call, {
      pipeline: 'out',
      spec: {
        steps: [
          {
            slug: 'orders',
            kind: 'source',
            data_source_ref: 'warehouse',
            operation: {
              operation_type: 'sql',
              sql: 'SELECT id, name, amount, note FROM orders ORDER BY id',
            },
          },
          {
            slug: 'commit',
            kind: 'sink',
            data_source_ref: 'repo',
            operation: {
              operation_type: 'git',
              path: 'copies/orders.csv',
              message: 'copy of {{runtime.run_slug}}',
            },
          },
        ],
        edges: [{ from: 'orders', to: 'commit' }],
      },
      bindings: { repo: 'big', warehouse: 'warehouse' },
    });
    const back = await runToEnd(s.call, 'out', { run_slug: 'out-1' }, 240_000);
    expect(back, JSON.stringify(back)).toMatchObject({ state: 'succeeded', error: null });
    expect(stepOf(back, 'commit')).toMatchObject({ rows_in: N, rows_out: N });
    expect(commitMessage(repo, 'main')).toBe('copy of out-1');
    const text = showFile(repo, 'main', 'data/copies/orders.csv').toString();
    const expected = ['"id","name","amount","note"'];
    for (let i = 1; i <= N; i++)
      expected.push(`"${i}","name ${i}","${amountOf(i)}","a, ""quoted"" note\nline ${i}"`);
    expect(text === `${expected.join('\n')}\n`, 'the committed file holds every row as written').toBe(true);
    // The original file is untouched by the new commit.
    expect(showFile(repo, 'main', 'data/orders.csv').toString()).toBe(csvOf(N));
  }, 480_000);
});
