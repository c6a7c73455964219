import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { runCli } from '../../../test/support/cli';

// `sluice apply` against a listening API host: plans, idempotency, updates, credentials that
// never come from files, and --prune limited to what apply itself manages.
describe('sluice apply', () => {
  let t: TestApp;
  let baseUrl: string;
  let token: string;
  let dir: string;
  let config: string;
  const write = (name: string, text: string) => fs.writeFileSync(path.join(dir, name), text);
  const apply = (args: string[], opts: { env?: Record<string, string>; input?: string } = {}) =>
    runCli(['apply', '--org', 'acme', '-f', dir, ...args], {
      env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: token, SLUICE_CONFIG_DIR: config, ...opts.env },
      input: opts.input,
    });
  const get = async (url: string) => t.call('GET', url, { token });

  const projectYaml = (description: string) => `
kind: Environment
slug: staging
name: Staging
---
kind: Project
slug: shop
name: Shop
description: ${description}
environments: [staging]
`;
  const sourceJson = (timeout: number) =>
    JSON.stringify([
      {
        kind: 'DataSource',
        slug: 'shop-api',
        name: 'Shop API',
        type: 'http',
        config: {
          // An apply-file variable with a default, not a JavaScript template.
          // biome-ignore lint/suspicious/noTemplateCurlyInString: apply substitutes it
          base_url: '${SHOP_URL:-http://127.0.0.1:9}/api',
          timeout_seconds: timeout,
          allow_private_hosts: true,
        },
        credentials_from_env: { bearer_token: 'SHOP_TOKEN' },
      },
    ]);

  beforeAll(async () => {
    t = await startTestApp();
    token = (await t.bootstrap('acme')).api_key;
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-apply-'));
    config = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-apply-config-'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(config, { recursive: true, force: true });
  });

  it('refuses credentials in a file and names a missing variable without any value', async () => {
    write(
      'bad.yaml',
      'kind: DataSource\nslug: leaky\ntype: http\nconfig: {base_url: "http://x"}\ncredentials: {bearer_token: hunter2}\n',
    );
    let r = await apply([]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('credentials: not in files');
    expect(r.stderr).not.toContain('hunter2');
    fs.rmSync(path.join(dir, 'bad.yaml'));

    write('sources.json', sourceJson(10));
    r = await apply([]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('environment variable SHOP_TOKEN is not set');
    expect((await get('/organizations/acme/data-sources/shop-api')).statusCode).toBe(404);

    write('odd.yaml', 'kind: Widget\nslug: w\n');
    r = await apply([], { env: { SHOP_TOKEN: 'tok-123456' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('unknown kind Widget');
    fs.rmSync(path.join(dir, 'odd.yaml'));
  });

  it('plans, creates, stays idempotent and updates only what changed', async () => {
    write('project.yaml', projectYaml('first'));
    const env = { SHOP_TOKEN: 'tok-secret-123456' };
    let r = await apply(['--dry-run'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^create +DataSource shop-api$/m);
    expect(r.stdout).toMatch(/^create +Project shop$/m);
    expect(r.stdout).toContain('dry run: nothing changed');
    expect((await get('/organizations/acme/projects/shop')).statusCode).toBe(404);

    r = await apply([], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('applied: 3 created');
    const ds = (await get('/organizations/acme/data-sources/shop-api')).json();
    expect(ds.config.base_url).toBe('http://127.0.0.1:9/api');
    expect(JSON.stringify(ds)).not.toContain('tok-secret-123456');
    const enabled = (await get('/organizations/acme/projects/shop/environments')).json();
    expect(enabled.environments.map((e: { slug: string }) => e.slug)).toEqual(['staging']);

    r = await apply(['--json'], { env });
    expect(JSON.parse(r.stdout).resources.map((x: { action: string }) => x.action)).toEqual([
      'unchanged',
      'unchanged',
      'unchanged',
    ]);

    write('project.yaml', projectYaml('second'));
    write('sources.json', sourceJson(20));
    r = await apply(['--dry-run'], { env });
    expect(r.stdout).toMatch(/^update +DataSource shop-api {2}\(config\.timeout_seconds\)$/m);
    expect(r.stdout).toMatch(/^update +Project shop {2}\(description\)$/m);
    expect(r.stdout).toMatch(/^unchanged +Environment staging$/m);
    r = await apply([], { env });
    expect(r.code, r.stderr).toBe(0);
    expect((await get('/organizations/acme/projects/shop')).json().description).toBe('second');
    expect((await get('/organizations/acme/data-sources/shop-api')).json().config.timeout_seconds).toBe(20);
  });

  it('prunes only what an earlier apply of these files created', async () => {
    // Made by hand: apply never touches it, prune or not.
    const other = await t.call('POST', '/organizations/acme/projects', {
      token,
      body: { name: 'Manual', slug: 'manual' },
    });
    expect(other.statusCode).toBe(201);
    write('extra.yaml', 'kind: Project\nslug: temp\nname: Temporary\n');
    const env = { SHOP_TOKEN: 'tok-secret-123456' };
    expect((await apply([], { env })).code).toBe(0);
    fs.rmSync(path.join(dir, 'extra.yaml'));

    // Without --prune a removed document is left alone (and stays managed).
    let r = await apply([], { env });
    expect(r.stdout).not.toContain('temp');
    expect((await get('/organizations/acme/projects/temp')).statusCode).toBe(200);

    r = await apply(['--prune', '--dry-run'], { env });
    expect(r.stdout).toMatch(/^delete +Project temp$/m);
    expect(r.stdout).not.toContain('manual');
    expect((await get('/organizations/acme/projects/temp')).statusCode).toBe(200);

    r = await apply(['--prune'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^deleted +Project temp$/m);
    expect((await get('/organizations/acme/projects/temp')).statusCode).toBe(404);
    expect((await get('/organizations/acme/projects/manual')).statusCode).toBe(200);
    expect((await get('/organizations/acme/projects/shop')).statusCode).toBe(200);
    // The state file holds no secret.
    const states = fs.readdirSync(path.join(config, 'apply-state'));
    const state = fs.readFileSync(path.join(config, 'apply-state', states[0]), 'utf8');
    expect(state).not.toContain('tok-secret');
    expect(JSON.parse(state).resources).not.toContainEqual({ kind: 'Project', key: 'temp' });
  });

  it('reads credentials from standard input when the file asks for them', async () => {
    write(
      'stdin-source.yaml',
      'kind: DataSource\nslug: crm\nname: CRM\ntype: http\nconfig: {base_url: "http://127.0.0.1:9"}\ncredentials_from_stdin: true\n',
    );
    const r = await apply([], {
      env: { SHOP_TOKEN: 'tok-secret-123456' },
      input: '{"username": "u", "password": "pw-from-stdin"}',
    });
    expect(r.code, r.stderr).toBe(0);
    const crm = (await get('/organizations/acme/data-sources/crm')).json();
    expect(crm.type).toBe('http');
    expect(JSON.stringify(crm)).not.toContain('pw-from-stdin');
    expect(r.stdout + r.stderr).not.toContain('pw-from-stdin');
  });
});
