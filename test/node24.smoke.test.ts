import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, repoRoot, runCli, startCli } from './support/cli';
import { node24 } from './support/node24';

// The supported runtimes are Node 20.19+, 22.13+ and 24 (README "On a fresh machine"); the suite runs on
// the machine's Node, and this smoke run covers 24 with the npm registry's `node@24` package:
// `sluice serve` on a fresh embedded store, `sluice setup`, one pipeline run, one API call and
// one CLI call, every process on Node 24.

describe('smoke on Node 24', () => {
  let node: string;
  const started: CliProcess[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    node = await node24();
  }, 600_000);
  afterAll(() => {
    for (const p of started) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('serves, sets up, runs a pipeline and answers the API and the CLI', async () => {
    expect((await promisify(execFile)(node, ['--version'])).stdout).toMatch(/^v24\./);
    const data = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-node24-'));
    const config = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-node24-config-'));
    dirs.push(data, config);
    const env = { SLUICE_DATA_DIR: data, SLUICE_CONFIG_DIR: config };
    const sluice = async (args: string[], input?: string) => {
      const r = await runCli(args, { env, input, node });
      expect(r.code, `sluice ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
      return r.stdout;
    };

    const serve = startCli(['serve', '--api-addr', '127.0.0.1:0', '--app-addr', '127.0.0.1:0'], {
      env,
      node,
    });
    started.push(serve);
    const [, apiUrl] = await serve.waitForStdout(/API host: (http:\/\/\S+)/);
    await serve.waitForStdout(/setup code: /);

    const setup = JSON.parse(
      await sluice(
        [
          'setup',
          '--base-url',
          apiUrl,
          '--org',
          'acme',
          '--email',
          'me@example.com',
          '--password-stdin',
          '--json',
        ],
        'a-long-enough-password\n',
      ),
    );
    expect(setup.organization_slug).toBe('acme');

    // One API call, with the personal access token.
    const me = await fetch(`${apiUrl}/users/me`, {
      headers: { authorization: `Bearer ${setup.personal_access_token}` },
    });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ email: 'me@example.com' });

    // One pipeline run, through the CLI and its login profile.
    const at = ['--base-url', apiUrl];
    await sluice(['apply', '-f', path.join(repoRoot, 'examples/first-pipeline'), ...at]);
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
      ...at,
    ]);
    expect(run).toMatch(/org-activity in dev +succeeded/);

    // One more CLI call reading what the run left.
    const runs = JSON.parse(
      await sluice(['runs', 'list', '--project', 'first', '--env', 'dev', '--json', ...at]),
    );
    expect(runs.runs).toMatchObject([{ pipeline_slug: 'org-activity', state: 'succeeded' }]);
  }, 300_000);
});
