import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliProcess, repoRoot, runCli, startCli, storeForCli } from '../../../test/support/cli';

// GitOps with `sluice apply` (docs/cli.md "GitOps"), through the binary only, from an empty
// store: the files are the truth. A broken spec is refused before anything is written (no
// version pushed), --dry-run of it fails with the same finding, and reverting the file and
// applying again deploys exactly the reverted version, also when a newer version was deployed.
describe('sluice apply: refused specs and rollback by revert', () => {
  const started: CliProcess[] = [];
  afterAll(() => {
    for (const p of started) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  });

  it('refuses a broken spec without pushing it and rolls back to the files of an older commit', async () => {
    const store = await storeForCli();
    const config = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-gitops-'));
    const env = { ...store.env, SLUICE_CONFIG_DIR: config };
    const cli = (args: string[]) => runCli(args, { env });
    const sluice = async (args: string[]) => {
      const r = await cli(args);
      expect(r.code, `sluice ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
      return r.stdout;
    };
    try {
      const serve = startCli(['serve', '--api-addr', '127.0.0.1:0', '--app-addr', '127.0.0.1:0'], { env });
      started.push(serve);
      const [, apiUrl] = await serve.waitForStdout(/API host: (http:\/\/\S+)/);
      await serve.waitForStdout(/setup code: /);
      await sluice(['setup', '--base-url', apiUrl, '--org', 'acme', '--email', 'me@example.com']);

      // The repository: a copy of the example, edited and reverted like commits.
      const repo = path.join(config, 'repo');
      fs.cpSync(path.join(repoRoot, 'examples/first-pipeline'), repo, { recursive: true });
      const specFile = path.join(repo, 'org-activity.pipeline.json');
      const good = fs.readFileSync(specFile, 'utf8');
      const where = ['--project', 'first', '--env', 'dev'];
      const versions = async () =>
        JSON.parse(await sluice(['pipelines', 'versions', '--project', 'first', 'org-activity', '--json']))
          .versions as { spec_hash: string }[];
      const deployed = async () =>
        (
          JSON.parse(await sluice(['pipelines', 'deployments', ...where, '--json'])).deployments as {
            active: boolean;
            spec_hash: string;
          }[]
        ).find((d) => d.active)?.spec_hash;

      await sluice(['apply', '-f', repo]);
      const [v1] = await versions();
      expect(await deployed()).toBe(v1.spec_hash);

      // A typo in an edge: refused before anything is written.
      fs.writeFileSync(specFile, good.replace('"to": "summary"', '"to": "laod"'));
      const refused = await cli(['apply', '-f', repo]);
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stdout).toMatch(
        /^refused +Deployment first\/dev\/org-activity: spec \w+ is not valid in dev/m,
      );
      expect(refused.stdout).toMatch(/^error +UNKNOWN_STEP +edges\[0\]\.to +.*laod/m);
      expect(refused.stderr).toContain('refused, nothing was changed');
      expect(await versions()).toHaveLength(1);
      expect(await deployed()).toBe(v1.spec_hash);

      const dry = await cli(['apply', '-f', repo, '--dry-run']);
      expect(dry.code, dry.stderr).toBe(1);
      expect(dry.stdout).toMatch(/^error +UNKNOWN_STEP +edges\[0\]\.to +.*laod/m);
      const dryJson = await cli(['apply', '-f', repo, '--dry-run', '--json']);
      expect(dryJson.code).toBe(1);
      expect(JSON.parse(dryJson.stdout).refused[0].findings).toContainEqual(
        expect.objectContaining({ severity: 'error', code: 'UNKNOWN_STEP', path: 'edges[0].to' }),
      );
      expect(await versions()).toHaveLength(1);

      // A good change is deployed; the plan shows the hash moving.
      fs.writeFileSync(specFile, good.replace('"limit": "100"', '"limit": "50"'));
      const plan = await sluice(['apply', '-f', repo, '--dry-run']);
      expect(plan).toMatch(
        new RegExp(
          `^update +Deployment first/dev/org-activity {2}\\(spec_hash ${v1.spec_hash.slice(0, 12)} → \\w{12}\\)$`,
          'm',
        ),
      );
      await sluice(['apply', '-f', repo]);
      const [v2] = await versions();
      expect(v2.spec_hash).not.toBe(v1.spec_hash);
      expect(await deployed()).toBe(v2.spec_hash);

      // Revert: the older files roll the environment back to their version; nothing is pushed.
      fs.writeFileSync(specFile, good);
      const back = await sluice(['apply', '-f', repo, '--dry-run']);
      expect(back).toMatch(/^unchanged +Pipeline first\/org-activity$/m);
      expect(back).toContain(`(spec_hash ${v2.spec_hash.slice(0, 12)} → ${v1.spec_hash.slice(0, 12)})`);
      const applied = await cli(['apply', '-f', repo]);
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stdout).toMatch(/^updated +Deployment first\/dev\/org-activity/m);
      expect(await versions()).toHaveLength(2);
      expect(await deployed()).toBe(v1.spec_hash);
      expect(await sluice(['apply', '-f', repo])).toContain('0 created, 0 updated, 6 unchanged');

      // And the environment runs it.
      await sluice([
        'pipelines',
        'execute',
        ...where,
        '--pipeline',
        'org-activity',
        '--run-slug',
        'after-revert',
        '--wait',
      ]);
      const run = JSON.parse(await sluice(['runs', 'get', ...where, 'after-revert', '--json']));
      expect(run).toMatchObject({ state: 'succeeded', spec_hash: v1.spec_hash });

      serve.child.kill('SIGTERM');
      expect((await serve.exited).code).toBe(0);
    } finally {
      await store.drop();
      fs.rmSync(config, { recursive: true, force: true });
    }
  }, 240_000);
});
