import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliProcess, runCli, startCli } from '../../../test/support/cli';

// Signing in to the app without a restart (docs/app.md "Signing in"): while `sluice serve` holds
// the embedded store, `sluice users set-password` goes through that server with the user's own
// token, so the README's first steps end signed in. Also: serve warns once that mail goes to the
// log when SLUICE_SMTP_URL is unset (docs/operations.md "Mail without SMTP").

const EMAIL = 'me@example.com';
const FIRST = 'first-long-password-1';
const SECOND = 'second-long-password-2';

describe('users set-password while serve runs on the embedded store', () => {
  const started: CliProcess[] = [];
  const dirs: string[] = [];
  afterAll(() => {
    for (const p of started) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('sets the first password with the personal access token, then changes it with the current one', async () => {
    const data = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-setpw-'));
    const config = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-setpw-config-'));
    dirs.push(data, config);
    // The embedded store: no DATABASE_URL.
    const env = { SLUICE_DATA_DIR: data, SLUICE_CONFIG_DIR: config };
    const serve = startCli(['serve', '--api-addr', '127.0.0.1:0', '--app-addr', '127.0.0.1:0'], { env });
    started.push(serve);
    const [, apiUrl] = await serve.waitForStdout(/API host: (http:\/\/\S+)/);
    const [, appUrl] = await serve.waitForStdout(/app host: (http:\/\/\S+)/);
    await serve.waitForStdout(/setup code: /);

    const output = () => serve.stdout() + serve.stderr();
    const MAIL_WARNING = /SLUICE_SMTP_URL is unset: every mail/g;
    for (let i = 0; i < 100 && !output().match(MAIL_WARNING); i++)
      await new Promise((r) => setTimeout(r, 100));

    const setup = await runCli(['setup', '--base-url', apiUrl, '--org', 'acme', '--email', EMAIL, '--json'], {
      env,
    });
    expect(setup.code, setup.stderr).toBe(0);
    const pat = JSON.parse(setup.stdout).personal_access_token as string;

    const signIn = (password: string) =>
      fetch(`${appUrl}/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: appUrl },
        body: JSON.stringify({ email: EMAIL, password }),
      });
    const setPassword = (input: string, extra: string[] = [], token?: string) =>
      runCli(['users', 'set-password', '--email', EMAIL, '--base-url', apiUrl, ...extra], {
        env: { ...env, ...(token ? { SLUICE_TOKEN: token } : {}) },
        input,
      });

    // The profile holds the owner API key, which is no user: the answer says what is needed.
    const withKey = await setPassword(`${FIRST}\n`);
    expect(withKey.code).toBe(1);
    expect(withKey.stderr).toMatch(/personal access token/);
    expect(withKey.stderr).not.toMatch(/in use by process/);

    // The account was created without a password: the token alone sets the first one.
    const first = await setPassword(`${FIRST}\n`, [], pat);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ email: EMAIL, via: 'server' });
    expect(first.stdout + first.stderr).not.toContain(FIRST);
    const session = await signIn(FIRST);
    expect(session.status, await session.clone().text()).toBe(201);

    // Now it has one: changing it needs the current password too.
    const without = await setPassword(`${SECOND}\n`, [], pat);
    expect(without.code).toBe(1);
    expect(without.stderr).toMatch(/--current-password/);
    const wrong = await setPassword(`not-the-password\n${SECOND}\n`, ['--current-password'], pat);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/current_password is not correct/);
    const changed = await setPassword(`${FIRST}\n${SECOND}\n`, ['--current-password'], pat);
    expect(changed.code, changed.stderr).toBe(0);
    expect((await signIn(FIRST)).status).toBe(401);
    expect((await signIn(SECOND)).status).toBe(201);

    // Another account's password is not the token holder's to set.
    const other = await runCli(
      ['users', 'set-password', '--email', 'someone@example.com', '--base-url', apiUrl],
      {
        env: { ...env, SLUICE_TOKEN: pat },
        input: `${FIRST}\n`,
      },
    );
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/only their own password/);

    // Warned once, at start.
    expect(output().match(MAIL_WARNING)).toHaveLength(1);
  }, 180_000);
});
