import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliProcess, repoRoot, runCli, startCli, storeForCli } from '../../../test/support/cli';

// The README's first run, exactly as a newcomer types it, with nothing but the CLI: `sluice
// serve` on an empty store prints a setup code, `sluice setup` trades it for a token stored in a
// profile, `sluice apply` creates the examples' first pipeline and `sluice pipelines execute
// --wait` runs it to success. This test makes no HTTP call of its own.
describe('first run: examples/first-pipeline from an empty store', () => {
  const started: CliProcess[] = [];
  afterAll(() => {
    for (const p of started) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  });

  it('goes from an empty store to a succeeded run using only the CLI', async () => {
    const store = await storeForCli();
    const config = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-first-run-'));
    // What a newcomer's shell has: the store choice and where the CLI keeps its profile.
    const env = { ...store.env, SLUICE_CONFIG_DIR: config };
    const sluice = async (args: string[], input?: string) => {
      const r = await runCli(args, { env, input });
      expect(r.code, `sluice ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
      return r.stdout;
    };
    try {
      const serve = startCli(['serve', '--api-addr', '127.0.0.1:0', '--app-addr', '127.0.0.1:0'], { env });
      started.push(serve);
      const [, apiUrl] = await serve.waitForStdout(/API host: (http:\/\/\S+)/);
      const [, code, codeFile] = await serve.waitForStdout(/setup code: (\S+)\s+\(also in (\S+), mode 0600/);
      expect(path.resolve(codeFile)).toBe(path.resolve(store.env.SLUICE_DATA_DIR, 'setup-code'));
      expect(fs.statSync(codeFile).mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(codeFile, 'utf8').trim()).toBe(code);

      // A wrong code is refused and leaves the right one usable.
      const wrong = await runCli(
        ['setup', '--base-url', apiUrl, '--org', 'acme', '--email', 'me@example.com', '--code-stdin'],
        { env, input: 'AAAAA-BBBBB-CCCCC-DDDDD-EEEEE\n' },
      );
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain('FORBIDDEN');

      // The code is found in the data directory; the owner key lands in a 0600 profile.
      const setup = await sluice([
        'setup',
        '--base-url',
        apiUrl,
        '--org',
        'acme',
        '--email',
        'me@example.com',
      ]);
      expect(setup).toContain('organization acme created');
      const tokenFile = path.join(config, 'tokens', 'default');
      expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600);
      expect(setup).not.toContain(fs.readFileSync(tokenFile, 'utf8').trim());
      expect(fs.existsSync(codeFile)).toBe(false);
      const again = await runCli(
        ['setup', '--base-url', apiUrl, '--org', 'other', '--email', 'x@example.com', '--code-stdin'],
        {
          env,
          input: `${code}\n`,
        },
      );
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('CONFLICT');

      const example = path.join(repoRoot, 'examples/first-pipeline');
      const plan = await sluice(['apply', '-f', example, '--dry-run']);
      expect(plan).toMatch(/^create +DataSource sluice-api$/m);
      expect(plan).toMatch(/^create +Deployment first\/dev\/org-activity {2}\(spec_hash → a new version\)$/m);
      expect(plan).toContain('6 to create');

      const applied = await sluice(['apply', '-f', example]);
      expect(applied).toContain('applied: 6 created, 0 updated, 0 unchanged');
      // Idempotent: the same files again change nothing.
      expect(await sluice(['apply', '-f', example])).toContain('applied: 0 created, 0 updated, 6 unchanged');

      const run = await sluice([
        'pipelines',
        'execute',
        '--project',
        'first',
        '--env',
        'dev',
        '--pipeline',
        'org-activity',
        '--wait',
      ]);
      expect(run).toMatch(/org-activity in dev +succeeded/);
      expect(run).toMatch(/events +succeeded +rows in 0 out [1-9]/);
      // On the embedded store, serve's runs' transforms run in its child `sluice transform-host`
      // (docs/operations.md, "Transforms on the embedded store"): DuckDB never loads into the
      // process holding the store. On PostgreSQL they run in serve's own worker.
      const embedded = !store.env.DATABASE_URL;
      const mapped = (pid: number) => fs.readFileSync(`/proc/${pid}/maps`, 'utf8').includes('libduckdb');
      expect(mapped(serve.child.pid!)).toBe(!embedded);
      const hosts = fs
        .readdirSync('/proc')
        .filter((d) => /^\d+$/.test(d))
        .filter((d) => {
          try {
            const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
            const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
            return (
              ppid === serve.child.pid &&
              fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('transform-host')
            );
          } catch {
            return false;
          }
        });
      expect(hosts.length).toBe(embedded ? 1 : 0);
      if (embedded) expect(mapped(Number(hosts[0]))).toBe(true);

      const runs = JSON.parse(await sluice(['runs', 'list', '--project', 'first', '--env', 'dev', '--json']));
      expect(runs.runs).toMatchObject([{ pipeline_slug: 'org-activity', state: 'succeeded' }]);
      // The data source's credential is the CLI's own token: it never comes back.
      const ds = await sluice(['data-sources', 'get', 'sluice-api', '--json']);
      expect(ds).not.toContain(fs.readFileSync(tokenFile, 'utf8').trim());

      // Then the tour of examples/README.md: logs, a changed spec, its versions and their diff.
      const slug = runs.runs[0].slug;
      const where = ['--project', 'first', '--env', 'dev'];
      expect(await sluice(['runs', 'logs', ...where, slug, '--follow'])).toMatch(
        /events: GET to 127\.0\.0\.1:\d+ answered HTTP 200/,
      );
      expect(await sluice(['runs', 'get', ...where, slug])).toMatch(/^state: +succeeded$/m);
      const changed = path.join(config, 'changed');
      fs.cpSync(example, changed, { recursive: true });
      const specFile = path.join(changed, 'org-activity.pipeline.json');
      fs.writeFileSync(
        specFile,
        fs.readFileSync(specFile, 'utf8').replace('"limit": "100"', '"limit": "50"'),
      );
      const replan = await sluice(['apply', '-f', changed, '--dry-run']);
      expect(replan).toMatch(/^update +Pipeline first\/org-activity {2}\(spec\)$/m);
      expect(replan).toMatch(/^update +Deployment first\/dev\/org-activity/m);
      await sluice(['apply', '-f', changed]);
      const versions = JSON.parse(
        await sluice(['pipelines', 'versions', '--project', 'first', 'org-activity', '--json']),
      );
      expect(versions.versions).toHaveLength(2);
      const [newer, older] = versions.versions.map((v: { spec_hash: string }) => v.spec_hash.slice(0, 12));
      const diff = await sluice(['pipelines', 'diff', '--project', 'first', 'org-activity', older, newer]);
      expect(diff).toContain('- steps[0].operation.query_params.limit: "100"');
      expect(diff).toContain('+ steps[0].operation.query_params.limit: "50"');
      const deployed = JSON.parse(await sluice(['pipelines', 'deployments', ...where, '--json']));
      expect(deployed.deployments.find((d: { active: boolean }) => d.active).spec_hash.slice(0, 12)).toBe(
        newer,
      );

      expect(await sluice(['bindings', 'list', ...where])).toMatch(
        /^org-activity +sluice-api +sluice-api +http /m,
      );
      expect(await sluice(['checkpoints', 'reset', ...where, 'org-activity'])).toContain(
        'reset: done (org-activity)',
      );
      expect(
        JSON.parse(await sluice(['checkpoints', 'list', ...where, 'org-activity', '--json'])).checkpoints,
      ).toEqual([]);

      serve.child.kill('SIGTERM');
      expect((await serve.exited).code).toBe(0);
    } finally {
      await store.drop();
      fs.rmSync(config, { recursive: true, force: true });
    }
  }, 240_000);
});
