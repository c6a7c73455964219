import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Envelope, verifyChain, verifyEnvelope } from '../../packages/server/src/modules/proof/dsse';
import { type GitHttpsPeer, startGitHttpsPeer } from '../peers/git-https';
import { commitFiles, git } from '../peers/git-repos';
import {
  type Call,
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  httpDataSource,
  ORG,
  ok,
  pgDataSource,
} from '../pipelines/support';
import { startTestApp, type TestApp } from '../support/app';
import { runCli } from '../support/cli';
import { createSinkDatabase } from '../support/runs';
import { observeUntilDone } from './support';

// Issue 13 acceptance for plain git over the real HTTPS git peer: settings checked against the
// live repository, observations at commits, signed receipts chained per data source, and
// `sluice proof verify` offline.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const PG_DB = `sluice_proof_${id}`;
const TOKEN = `glpat-ProofCanary${randomBytes(8).toString('hex')}`;
const DS = `${ORG}/data-sources/refdata`;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

const ORDERS = 'id,name,country\n1,ada,DE\n2,bob,FR\n';
const COUNTRIES = 'code,name\nDE,Germany\nFR,France\n';

describe('proof for a git data source', () => {
  let t: TestApp;
  let https: GitHttpsPeer;
  let token: string;
  let repo: string;
  let root: string;
  let sink: { drop(): Promise<unknown> };
  const savedCa = process.env.GIT_SSL_CAINFO;
  const call: Call = (method, url, body) => t.call(method, url, { token, body });

  const settings = (o: Record<string, unknown> = {}) => ({
    enabled: true,
    publish_checks: false,
    expected_repository_id: root,
    targets: [
      { kind: 'path', ref: 'ref/countries.csv' },
      { kind: 'pipeline', ref: 'load-orders' },
    ],
    ...o,
  });

  const observe = (body: Record<string, unknown>) => observeUntilDone(call, DS, body);
  const compile = (candidate: string, observations: string[]) =>
    call('POST', `${DS}/proof-receipts:compile`, {
      candidate_slug: candidate,
      observation_slugs: observations,
    });
  const keys = async () => (await t.call('GET', '/proof-keys')).json().keys;

  beforeAll(async () => {
    https = await startGitHttpsPeer({ token: TOKEN });
    process.env.GIT_SSL_CAINFO = https.caFile;
    repo = https.createRepo('refdata');
    root = commitFiles(repo, 'main', { 'data/orders.csv': ORDERS, 'ref/countries.csv': COUNTRIES });
    sink = await createSinkDatabase(PG_DB);
    t = await startTestApp({ worker: true, env: { SLUICE_RATE_LIMIT_PER_TOKEN: '100000' } });
    token = (await t.bootstrap('acme')).api_key;
    await createProjectAndEnvironment(call);
    await createDataSource(call, {
      type: 'git',
      name: 'refdata',
      slug: 'refdata',
      config: { repo_url: `${https.url}refdata.git`, allow_private_hosts: true },
      credentials: { auth_type: 'https', username: 'sluice', token: TOKEN },
    });
    await createDataSource(call, pgDataSource('warehouse', PG_DB));
    await deployPipeline(call, {
      pipeline: 'load-orders',
      spec: {
        steps: [
          {
            slug: 'orders-file',
            kind: 'source',
            data_source_ref: 'repo',
            operation: { operation_type: 'git', path: 'data/orders.csv' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'warehouse',
            operation: { operation_type: 'sql', write: { table: 'orders', mode: 'replace' } },
          },
        ],
        edges: [{ from: 'orders-file', to: 'load' }],
      },
      bindings: { repo: 'refdata', warehouse: 'warehouse' },
    });
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await https?.close();
    await sink?.drop();
    if (savedCa === undefined) delete process.env.GIT_SSL_CAINFO;
    else process.env.GIT_SSL_CAINFO = savedCa;
  });

  it('lists the signing key before any receipt exists, so a verifier can pin it in advance', async () => {
    const listed = await keys();
    expect(listed).toEqual([
      {
        keyid: expect.stringMatching(/^[0-9a-f]{64}$/),
        algorithm: 'ed25519',
        public_key_pem: expect.stringContaining('BEGIN PUBLIC KEY'),
        active: true,
        created_at: expect.any(String),
        valid_from: expect.any(String),
        valid_until: null,
      },
    ]);
    expect(await ok(call('GET', `${DS}/proof-receipts`), 200)).toMatchObject({ receipts: [] });
  });

  it('answers the defaults in force before the first PUT, and nothing for other kinds', async () => {
    expect(await ok(call('GET', `${DS}/proof-settings`), 200)).toEqual({
      data_source_slug: 'refdata',
      enabled: false,
      publish_checks: false,
      expected_repository_id: null,
      targets: [],
      created_at: null,
      updated_at: null,
    });
    // The defaults observe nothing.
    const refused = await call('POST', `${DS}/proof-observations`, { ref: 'main' });
    expect(refused.statusCode).toBe(409);
    await createDataSource(call, httpDataSource('api', 'http://127.0.0.1:9'));
    const other = await call('GET', `${ORG}/data-sources/api/proof-settings`);
    expect(other.statusCode).toBe(404);
    expect(other.json().error.code).toBe('NOT_FOUND');
  });

  it('checks the repository id when enabling, and has no settings for other kinds', async () => {
    const wrong = await call(
      'PUT',
      `${DS}/proof-settings`,
      settings({ expected_repository_id: 'f'.repeat(40) }),
    );
    expect(wrong.statusCode).toBe(409);
    expect(wrong.json().error.code).toBe('REPOSITORY_MISMATCH');
    const unknown = await call(
      'PUT',
      `${DS}/proof-settings`,
      settings({
        targets: [
          { kind: 'pipeline', ref: 'nope' },
          { kind: 'path', ref: '../etc' },
        ],
      }),
    );
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.validation_errors.map((v: any) => v.path)).toEqual([
      'targets.0.ref',
      'targets.1.ref',
    ]);
    const tooMany = settings({
      targets: Array.from({ length: 101 }, (_, i) => ({ kind: 'path', ref: `f${i}` })),
    });
    expect((await call('PUT', `${DS}/proof-settings`, tooMany)).statusCode).toBe(400);

    const created = await ok(call('PUT', `${DS}/proof-settings`, settings()), 201);
    expect(created).toMatchObject({
      enabled: true,
      expected_repository_id: root,
      data_source_slug: 'refdata',
    });
    expect(await ok(call('PUT', `${DS}/proof-settings`, settings()), 200)).toMatchObject({ enabled: true });
    expect(await ok(call('GET', `${DS}/proof-settings`), 200)).toMatchObject({
      enabled: true,
      expected_repository_id: root,
      created_at: created.created_at,
    });

    expect((await call('GET', `${ORG}/data-sources/api/proof-settings`)).statusCode).toBe(404);
    expect((await call('PUT', `${ORG}/data-sources/api/proof-settings`, settings())).statusCode).toBe(404);
  });

  let first: any;
  let firstReceipt: any;

  it('observes a commit: every input file hashed, every target checked, and signs a receipt', async () => {
    first = await observe({ ref: 'main' });
    expect(first).toMatchObject({ state: 'passed', repository_id: root, commit_sha: root, error: null });
    expect(first.tree_sha).toBe(git(repo, ['rev-parse', `${root}^{tree}`]).trim());
    expect(first.inputs.map((f: any) => [f.path, f.sha256])).toEqual([
      ['data/orders.csv', sha256(ORDERS)],
      ['ref/countries.csv', sha256(COUNTRIES)],
    ]);
    expect(first.targets.map((r: any) => [r.kind, r.result])).toEqual([
      ['path', 'pass'],
      ['pipeline', 'pass'],
    ]);
    expect(first.digest).toMatch(/^[0-9a-f]{64}$/);

    firstReceipt = await ok(compile(first.candidate_slug, [first.slug]), 201);
    expect(firstReceipt).toMatchObject({
      verdict: 'PASSED',
      sequence: 1,
      prev_receipt_digest: null,
      check: null,
    });
    const checked = verifyEnvelope(firstReceipt.envelope, await keys());
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    expect(checked.statement.subject[0]).toEqual({ name: `git+${root}`, digest: { gitCommit: root } });
    expect(checked.statement.predicate).toMatchObject({
      verdict: 'PASSED',
      data_source_slug: 'refdata',
      observations: [{ slug: first.slug, digest: first.digest, role: 'head' }],
      prev_receipt_digest: null,
    });
    expect(await ok(call('GET', `${DS}/proof-receipts/${firstReceipt.slug}`), 200)).toEqual(firstReceipt);
  });

  it('fails a commit that removes a file a pipeline reads, and chains the receipts', async () => {
    // A commit whose tree no longer has data/orders.csv (commitFiles only adds files).
    const broken = commitFiles(repo, 'main', { 'ref/countries.csv': COUNTRIES }, 'touch countries');
    const index = path.join(os.tmpdir(), `proof-index-${id}`);
    const env = { ...process.env, GIT_INDEX_FILE: index };
    execFileSync('git', ['read-tree', broken], { cwd: repo, env });
    execFileSync('git', ['rm', '--cached', '-q', 'data/orders.csv'], { cwd: repo, env });
    const tree = execFileSync('git', ['write-tree'], { cwd: repo, env }).toString().trim();
    const head = git(repo, ['commit-tree', tree, '-p', broken, '-m', 'drop orders']).trim();
    git(repo, ['update-ref', 'refs/heads/main', head]);
    fs.rmSync(index, { force: true });

    const second = await observe({ commit_sha: head });
    expect(second.state).toBe('failed');
    const pipelineResult = second.targets.find((r: any) => r.kind === 'pipeline');
    expect(pipelineResult.result).toBe('fail');
    expect(pipelineResult.findings[0]).toMatchObject({ code: 'FILE_MISSING', path: 'data/orders.csv' });
    expect(pipelineResult.findings[0].message).toContain('orders-file');

    const receipt = await ok(compile(second.candidate_slug, [first.slug, second.slug]), 201);
    expect(receipt).toMatchObject({
      verdict: 'FAILED',
      sequence: 2,
      prev_receipt_digest: firstReceipt.digest,
    });
    const checked = verifyEnvelope(receipt.envelope, await keys());
    expect(checked.ok && checked.statement.predicate.drift.changes).toContainEqual(
      expect.objectContaining({ kind: 'file_removed', path: 'data/orders.csv' }),
    );
    const list = await ok(call('GET', `${DS}/proof-receipts`), 200);
    expect(list.receipts.map((r: any) => r.sequence)).toEqual([2, 1]);
    expect(verifyChain(list.receipts)).toEqual({ ok: true });

    // A third receipt, then the middle one removed: the chain says which is missing.
    const third = await ok(compile(second.candidate_slug, [second.slug]), 201);
    expect(verifyChain([firstReceipt, third])).toMatchObject({
      ok: false,
      reason: expect.stringContaining('missing'),
    });
  });

  it('refuses to compile what does not qualify, with the reason', async () => {
    const list = await ok(call('GET', `${DS}/proof-observations?limit=100`), 200);
    const [latest, oldest] = [list.observations[0], list.observations.at(-1)];
    const three = await compile(latest.candidate_slug, [latest.slug, oldest.slug, 'obs-third']);
    expect(three.statusCode).toBe(400);
    const notHead = await compile(latest.candidate_slug, [oldest.slug]);
    expect(notHead.statusCode).toBe(409);
    expect(notHead.json().error).toMatchObject({ code: 'PROOF_NOT_COMPILABLE' });
    expect(notHead.json().error.message).toContain('candidate commit');
    const foreign = await compile(latest.candidate_slug, ['obs-of-nobody']);
    expect(foreign.statusCode).toBe(409);
    expect(foreign.json().error.message).toContain('not an observation of data source refdata');
    expect((await compile('cand-nope', [latest.slug])).statusCode).toBe(404);
  });

  it('observes, compiles and verifies with the CLI, and rejects a receipt altered by a byte', async () => {
    const baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const cli = (args: string[]) => runCli(args, { env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: token } });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proof-verify-'));
    const keyFile = path.join(dir, 'keys.json');
    const keys = await runCli(['proof', 'keys'], { env: { SLUICE_BASE_URL: baseUrl } });
    expect(keys.code, keys.stderr).toBe(0);
    fs.writeFileSync(keyFile, keys.stdout);

    const observed = await cli([
      'proof',
      'observe',
      'refdata',
      '--org',
      'acme',
      '--commit',
      root,
      '--wait',
      '--json',
    ]);
    expect(observed.code, observed.stderr).toBe(0);
    const obs = JSON.parse(observed.stdout);
    expect(obs).toMatchObject({ state: 'passed', commit_sha: root });
    const compiled = await cli([
      'proof',
      'compile',
      'refdata',
      obs.slug,
      '--org',
      'acme',
      '--candidate',
      obs.candidate_slug,
      '--json',
    ]);
    expect(compiled.code, compiled.stderr).toBe(0);
    const good = path.join(dir, 'receipt.json');
    fs.writeFileSync(good, compiled.stdout);
    const verified = await runCli(['proof', 'verify', good, '--keys', keyFile]);
    expect(verified.stderr).toBe('');
    expect(verified.code).toBe(0);
    expect(verified.stdout).toContain('verified, PASSED');
    const broken = await cli(['proof', 'observe', 'refdata', '--org', 'acme', '--wait']);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain('FILE_MISSING');

    const env: Envelope = firstReceipt.envelope;
    const payload = Buffer.from(env.payload, 'base64');
    payload[payload.indexOf('PASSED')] = 'F'.charCodeAt(0);
    const sig = Buffer.from(env.signatures[0].sig, 'base64');
    sig[0] ^= 1;
    for (const altered of [
      { ...env, payload: payload.toString('base64') },
      { ...env, signatures: [{ ...env.signatures[0], sig: sig.toString('base64') }] },
    ]) {
      const file = path.join(dir, 'altered.json');
      fs.writeFileSync(file, JSON.stringify({ ...firstReceipt, envelope: altered }));
      const refused = await runCli(['proof', 'verify', file, '--keys', keyFile]);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('does not verify');
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('never shows the repository token', async () => {
    expect(t.logs()).not.toContain(TOKEN);
    const everything = JSON.stringify([
      await (await call('GET', `${DS}/proof-observations`)).json(),
      await (await call('GET', `${DS}/proof-receipts`)).json(),
    ]);
    expect(everything).not.toContain(TOKEN);
  });
});
