import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { runCli, startCli } from '../../../test/support/cli';

// The resource commands as a user runs them (child processes on a listening API host): tables
// for people, the API's JSON with --json, bodies from YAML files, secrets only from stdin.
describe('sluice resource commands', () => {
  let t: TestApp;
  let baseUrl: string;
  let token: string;
  let dir: string;
  const sluice = async (args: string[], opts: { input?: string; env?: Record<string, string> } = {}) => {
    const r = await runCli(args, {
      env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: token, SLUICE_ORG: 'acme', ...opts.env },
      input: opts.input,
    });
    expect(r.code, `sluice ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
    return r.stdout;
  };
  const json = async (args: string[], input?: string) =>
    JSON.parse(await sluice([...args, '--json'], { input }));

  beforeAll(async () => {
    t = await startTestApp();
    token = (await t.bootstrap('acme')).api_key;
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-resources-'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('manages projects, environments, secrets and variables', async () => {
    expect(await sluice(['projects', 'create', '--name', 'Shop', '--slug', 'shop'])).toMatch(
      /^slug: +shop$/m,
    );
    expect(await sluice(['projects', 'list'])).toMatch(
      /^SLUG +NAME +DESCRIPTION +CREATED_AT\nshop +Shop +- /,
    );
    expect((await json(['projects', 'update', 'shop', '--description', 'the shop'])).description).toBe(
      'the shop',
    );
    await sluice([
      'environments',
      'create',
      '--name',
      'Staging',
      '--slug',
      'staging',
      '--set',
      'run_timeout_seconds=600',
    ]);
    expect((await json(['environments', 'get', 'staging'])).run_timeout_seconds).toBe(600);
    await sluice(['environments', 'enable', '--project', 'shop', '--env', 'staging', '--default']);
    expect((await json(['environments', 'list-enabled', '--project', 'shop'])).environments).toMatchObject([
      { slug: 'staging', is_default: true },
    ]);

    // The value comes from standard input and is never printed back.
    const secret = await sluice(
      ['secrets', 'set', '--env', 'staging', 'API_KEY', '--description', 'shop key'],
      {
        input: 'sk-very-secret-value\n',
      },
    );
    expect(secret).not.toContain('sk-very-secret');
    const listed = await sluice(['secrets', 'list', '--env', 'staging']);
    expect(listed).toMatch(/^API_KEY +shop key/m);
    expect(listed).not.toContain('sk-very-secret');
    const noValue = await runCli(['secrets', 'set', '--env', 'staging', 'EMPTY'], {
      env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: token, SLUICE_ORG: 'acme' },
    });
    expect(noValue.code).toBe(1);
    expect(noValue.stderr).toContain('standard input');

    await sluice(['variables', 'set', '--env', 'staging', 'REGION', 'eu']);
    expect((await json(['variables', 'get', '--env', 'staging', 'REGION'])).value).toBe('eu');
    await sluice(['variables', 'delete', '--env', 'staging', 'REGION']);
    expect((await json(['variables', 'list', '--env', 'staging'])).runtime_variables).toEqual([]);
  });

  it('creates a data source from YAML with credentials from the environment, and lists with the pager', async () => {
    const file = path.join(dir, 'warehouse.yaml');
    fs.writeFileSync(
      file,
      'type: http\nname: Warehouse\nslug: warehouse\nconfig:\n  base_url: http://127.0.0.1:9\n  allow_private_hosts: true\n',
    );
    // Without the variable the command fails before any request, naming the variable only.
    const missing = await runCli(
      ['data-sources', 'create', '-f', file, '--credential-env', 'bearer_token=WH_TOKEN'],
      {
        env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: token, SLUICE_ORG: 'acme' },
      },
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('environment variable WH_TOKEN is not set');
    const ds = JSON.parse(
      await sluice(
        ['data-sources', 'create', '-f', file, '--credential-env', 'bearer_token=WH_TOKEN', '--json'],
        {
          env: { WH_TOKEN: 'wh-token-value-1234' },
        },
      ),
    );
    expect(ds).toMatchObject({ slug: 'warehouse', type: 'http' });
    expect(JSON.stringify(ds)).not.toContain('wh-token-value');
    fs.writeFileSync(
      path.join(dir, 'inline.yaml'),
      'type: http\nname: X\nconfig: {base_url: "http://x"}\ncredentials: {bearer_token: t}\n',
    );
    const inline = await runCli(['data-sources', 'create', '-f', path.join(dir, 'inline.yaml')], {
      env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: token, SLUICE_ORG: 'acme' },
    });
    expect(inline.code).toBe(1);
    expect(inline.stderr).toContain('credentials do not belong in a file');

    // A refused connection is a failed test: the result is printed and the exit code is 1, so
    // scripts and CI can rely on it (README "Exit codes").
    const tested = await runCli(['data-sources', 'test', 'warehouse', '--json'], {
      env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: token, SLUICE_ORG: 'acme' },
    });
    expect(tested.code).toBe(1);
    expect(JSON.parse(tested.stdout)).toMatchObject({ data_source_slug: 'warehouse', ok: false });

    for (const name of ['a', 'b', 'c'])
      await sluice(['projects', 'create', '--name', `P ${name}`, '--slug', `p-${name}`]);
    const page = await json(['projects', 'list', '--limit', '2']);
    expect(page.projects).toHaveLength(2);
    expect(page.has_more).toBe(true);
    const all = await json(['projects', 'list', '--limit', '2', '--all']);
    expect(all.projects.map((p: { slug: string }) => p.slug).sort()).toEqual(['p-a', 'p-b', 'p-c', 'shop']);
  });

  it('filters events, and manages roles and invitations', async () => {
    const events = await json(['events', '--entity-type', 'project', '--action', 'create', '--limit', '100']);
    expect(events.events.length).toBeGreaterThanOrEqual(4);
    expect(events.events.every((e: { entity_type: string }) => e.entity_type === 'project')).toBe(true);
    const security = await json(['security-events', '--entity-type', 'api_key']);
    expect(security.events.length).toBeGreaterThan(0);

    await sluice([
      'roles',
      'create',
      '--name',
      'Readers',
      '--slug',
      'readers',
      '--set',
      'permissions=["projects.read"]',
    ]);
    expect((await json(['roles', 'get', 'readers'])).permissions).toEqual(['projects.read']);
    expect(await sluice(['roles', 'permissions'])).toMatch(/^projects\.read +/m);
    const invite = await json(['invitations', 'create', '--email', 'new@example.com', '--role', 'readers']);
    expect(invite).toMatchObject({ email: 'new@example.com', status: 'pending' });
    await sluice(['invitations', 'revoke', invite.slug]);
    expect(await sluice(['members', 'list'])).toMatch(/owner/);
  });

  it('saves and executes a query with parameters, and lists its executions', async () => {
    const source = path.join(dir, 'self.yaml');
    fs.writeFileSync(
      source,
      `type: http\nname: Self\nslug: self\nconfig:\n  base_url: ${baseUrl}/organizations/acme\n  allow_private_hosts: true\n`,
    );
    await sluice(['data-sources', 'create', '-f', source, '--credential-env', 'bearer_token=SELF_TOKEN'], {
      env: { SELF_TOKEN: token },
    });
    const query = path.join(dir, 'query.yaml');
    fs.writeFileSync(
      query,
      'name: One project\nslug: one-project\ndata_source_slug: self\nstatement:\n  type: http\n  method: GET\n  path: /projects/{{project}}\n',
    );
    await sluice(['queries', 'create', '-f', query]);
    await sluice(['projects', 'create', '--name', 'Queried', '--slug', 'queried']);
    const run = await json(['queries', 'execute', 'one-project', '--param', 'project=queried']);
    expect(run).toMatchObject({ query_slug: 'one-project', status: 'succeeded' });
    expect(JSON.stringify(run.result)).toContain('"slug":"queried"');
    expect(JSON.stringify(run)).not.toContain(token);
    const executions = await json(['queries', 'executions', 'one-project']);
    expect(executions.query_executions.map((e: { slug: string }) => e.slug)).toEqual([run.slug]);
    expect((await json(['queries', 'execution', run.slug])).status).toBe('succeeded');
  });

  it('stores a login profile with its token in a 0600 file, and later commands use it', async () => {
    const config = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-login-'));
    try {
      const bare = { SLUICE_CONFIG_DIR: config };
      const bad = await runCli(['login', '--base-url', baseUrl], {
        env: bare,
        input: 'slc_key_not-a-real-token\n',
      });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('UNAUTHENTICATED');
      expect(fs.existsSync(path.join(config, 'tokens', 'default'))).toBe(false);

      const ok = await runCli(['login', '--base-url', baseUrl, '--profile', 'local'], {
        env: bare,
        input: `${token}\n`,
      });
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toContain(`logged in to ${baseUrl} as profile local, organization acme`);
      expect(ok.stdout).not.toContain(token);
      const file = path.join(config, 'tokens', 'local');
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
      expect(fs.readFileSync(file, 'utf8').trim()).toBe(token);
      expect(fs.readFileSync(path.join(config, 'config.json'), 'utf8')).not.toContain(token);

      // No token, address or organization in the environment: the profile supplies all three.
      const listed = await runCli(['projects', 'list', '--json'], { env: bare });
      expect(listed.code, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout).projects.length).toBeGreaterThan(0);
    } finally {
      fs.rmSync(config, { recursive: true, force: true });
    }
  });

  it('follows new events as they happen', async () => {
    const follow = startCli(
      ['events', '--follow', '--interval', '0.2', '--entity-type', 'project', '--json'],
      {
        env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: token, SLUICE_ORG: 'acme' },
      },
    );
    try {
      // Once it says where it starts, anything later is printed and nothing earlier.
      await vi.waitFor(() => expect(follow.stderr()).toContain('following events from'), { timeout: 30_000 });
      await sluice(['projects', 'create', '--name', 'Followed', '--slug', 'followed']);
      const [line] = await follow.waitForStdout(/^\{.*"entity_slug":"followed".*\}$/m, 30_000);
      expect(JSON.parse(line)).toMatchObject({ entity_type: 'project', action: 'create' });
      expect(follow.stdout()).not.toContain('"entity_slug":"shop"');
    } finally {
      follow.child.kill('SIGTERM');
      await follow.exited;
    }
  });

  it('prints a completion script for bash and zsh that knows every command', async () => {
    const bash = await sluice(['completion', 'bash']);
    expect(bash).toContain('complete -o default -F _sluice sluice');
    expect(bash).toMatch(/"data-sources"\) words="[^"]*import-schema/);
    expect(bash).toMatch(/"pipelines"\) words="[^"]*diff/);
    expect(await sluice(['completion', 'zsh'])).toMatch(/^#compdef sluice/);
  });
});
