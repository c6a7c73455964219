import type { Command } from 'commander';
import { CliError, ExitCode } from '../exit';
import { printJson, readStdin } from '../io';
import { configFrom, loadServer, openStoreRuntime } from '../store';

// Same bounds as sign-up's password rule.
const PASSWORD_MIN = 12;
const PASSWORD_MAX = 200;

/** Sets an account's password straight in the store, so its owner can sign in to the app. */
export function usersSetPasswordCommand(users: Command) {
  users
    .command('set-password')
    .description(
      "Set a user's password for signing in to the browser app (reads it from standard input); " +
        "ends the user's browser sessions",
    )
    .requiredOption('--email <email>', "the user's email")
    .action(async (opts: { email: string }) => {
      const server = await loadServer();
      const email = server.emailSchema.safeParse(opts.email);
      if (!email.success) throw new CliError(ExitCode.failed, `--email: ${email.error.issues[0].message}`);
      const password = (await readStdin()).replace(/\r?\n$/, '');
      if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
        throw new CliError(
          ExitCode.failed,
          `the password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`,
        );
      }
      const config = await configFrom();
      const rt = await openStoreRuntime(config, { logStream: process.stderr, supervise: false });
      try {
        const done = await server.setUserPassword(rt.deps, { email: email.data, password });
        printJson({ ...done, sign_in_url: config.publicUrl });
      } catch (err) {
        if (err instanceof server.UnknownUserError) throw new CliError(ExitCode.failed, err.message);
        throw err;
      } finally {
        await rt.close();
      }
    });
}
