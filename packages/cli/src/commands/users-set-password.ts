import { ApiError } from '@sluice/client';
import type { Command } from 'commander';
import { apiClient } from '../api';
import { CliError, ExitCode } from '../exit';
import { printJson, readStdin } from '../io';
import { call } from '../resource';
import { configFrom, loadServer, openStoreRuntime, StoreHeldError } from '../store';

// Same bounds as sign-up's password rule.
const PASSWORD_MIN = 12;
const PASSWORD_MAX = 200;

type Options = { email: string; currentPassword?: boolean; baseUrl?: string };
type Me = { slug: string; email: string };

/** The new password, and with --current-password the present one (first line). */
async function passwordsFromStdin(opts: Options): Promise<{ password: string; current?: string }> {
  const input = await readStdin();
  let current: string | undefined;
  let rest = input;
  if (opts.currentPassword) {
    const nl = input.search(/\r?\n/);
    if (nl < 0) {
      throw new CliError(
        ExitCode.failed,
        '--current-password: standard input needs the current password on the first line and the new one on the second',
      );
    }
    current = input.slice(0, nl);
    rest = input.slice(nl).replace(/^\r?\n/, '');
  }
  const password = rest.replace(/\r?\n$/, '');
  if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
    throw new CliError(ExitCode.failed, `the password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
  }
  return { password, current };
}

/**
 * Through the running server that holds the store: the caller's own account only, with their
 * own token (PATCH /users/me; an account created without a password needs no current one).
 */
async function setThroughServer(opts: Options, email: string, p: { password: string; current?: string }) {
  const client = await apiClient({ baseUrl: opts.baseUrl });
  let me: Me;
  try {
    me = (await call<Me>(client, 'GET', '/users/me')).data;
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403))
      throw new CliError(
        ExitCode.failed,
        `a running server holds the store, so the password is set through it with the account's own ` +
          `personal access token (sluice setup printed it): set SLUICE_TOKEN to it (${err.code})`,
      );
    throw err;
  }
  if (me.email !== email)
    throw new CliError(
      ExitCode.failed,
      `the token belongs to ${me.email}: through a running server, users set only their own password`,
    );
  try {
    await call(client, 'PATCH', '/users/me', {
      body: { password: p.password, ...(p.current !== undefined ? { current_password: p.current } : {}) },
    });
  } catch (err) {
    if (err instanceof ApiError && err.validationErrors.some((v) => v.path === 'current_password'))
      throw new CliError(
        ExitCode.failed,
        err.validationErrors.some((v) => v.code === 'required')
          ? 'this account already has a password: pass --current-password and give the current one on the first line of standard input'
          : 'current_password is not correct',
      );
    throw err;
  }
  return { user_slug: me.slug, email: me.email, via: 'server' as const };
}

/** Sets an account's password so its owner can sign in to the app. */
export function usersSetPasswordCommand(users: Command) {
  users
    .command('set-password')
    .description(
      "Set a user's password for signing in to the browser app (reads it from standard input); " +
        "ends the user's browser sessions. Writes the store directly; when a running server holds " +
        "it (the embedded store under sluice serve), goes through that server with the user's own " +
        'token (SLUICE_TOKEN or the login profile)',
    )
    .requiredOption('--email <email>', "the user's email")
    .option(
      '--current-password',
      'through a running server, an account that already has a password: standard input holds the current password on the first line, the new one on the second',
    )
    .option(
      '--base-url <url>',
      'API host address when a running server holds the store (default: env SLUICE_BASE_URL, the login profile, else http://127.0.0.1:8080)',
    )
    .action(async (opts: Options) => {
      const server = await loadServer();
      const email = server.emailSchema.safeParse(opts.email);
      if (!email.success) throw new CliError(ExitCode.failed, `--email: ${email.error.issues[0].message}`);
      const passwords = await passwordsFromStdin(opts);
      const config = await configFrom();
      let rt: Awaited<ReturnType<typeof openStoreRuntime>>;
      try {
        rt = await openStoreRuntime(config, { logStream: process.stderr, supervise: false });
      } catch (err) {
        if (!(err instanceof StoreHeldError)) throw err;
        const done = await setThroughServer(opts, email.data, passwords);
        return printJson({ ...done, sign_in_url: config.publicUrl });
      }
      try {
        const done = await server.setUserPassword(rt.deps, {
          email: email.data,
          password: passwords.password,
        });
        printJson({ ...done, via: 'store', sign_in_url: config.publicUrl });
      } catch (err) {
        if (err instanceof server.UnknownUserError) throw new CliError(ExitCode.failed, err.message);
        throw err;
      } finally {
        await rt.close();
      }
    });
}
