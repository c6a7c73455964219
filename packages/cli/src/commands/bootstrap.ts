import type { Command } from 'commander';
import { CliError, ExitCode } from '../exit';
import { printJson, readStdin } from '../io';
import { configFrom, loadServer, openStoreRuntime } from '../store';

type BootstrapOptions = { org: string; email: string; name?: string; passwordStdin?: boolean };

// Same bounds as sign-up's password rule.
const PASSWORD_MIN = 12;
const PASSWORD_MAX = 200;

export function bootstrapCommand(program: Command) {
  program
    .command('bootstrap')
    .description(
      'Create the first user, organization, owner API key and personal access token on an empty store; ' +
        'prints them as JSON once',
    )
    .requiredOption('--org <slug>', 'organization slug')
    .requiredOption('--email <email>', "the first user's email")
    .option('--name <name>', "the first user's display name (default: the email's local part)")
    .option('--password-stdin', 'read a password for the first user from standard input')
    .action(async (opts: BootstrapOptions) => {
      const server = await loadServer();
      const org = server.slugSchema.safeParse(opts.org);
      if (!org.success) throw new CliError(ExitCode.failed, `--org: ${org.error.issues[0].message}`);
      const email = server.emailSchema.safeParse(opts.email);
      if (!email.success) throw new CliError(ExitCode.failed, `--email: ${email.error.issues[0].message}`);
      if (opts.name !== undefined && (opts.name.length < 1 || opts.name.length > 100)) {
        throw new CliError(ExitCode.failed, '--name: 1 to 100 characters');
      }
      let password: string | undefined;
      if (opts.passwordStdin) {
        password = (await readStdin()).replace(/\r?\n$/, '');
        if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
          throw new CliError(
            ExitCode.failed,
            `the password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`,
          );
        }
      }
      const config = await configFrom();
      const rt = await openStoreRuntime(config, { logStream: process.stderr, supervise: false });
      try {
        const result = await server.bootstrap(rt.deps, {
          orgSlug: org.data,
          email: email.data,
          name: opts.name,
          password,
        });
        printJson(result);
        // stdout stays the JSON above; how to reach the app goes to stderr for the person.
        const login = email.data.trim().toLowerCase();
        process.stderr.write(
          `\nSign in to the app at ${config.publicUrl} (after \`sluice serve\`) as ${login}` +
            (password
              ? ' with the password you gave.\n'
              : `;\nfirst set a password: sluice users set-password --email ${login} < password-file\n`),
        );
      } catch (err) {
        if (err instanceof server.AlreadyBootstrappedError) throw new CliError(ExitCode.refused, err.message);
        throw err;
      } finally {
        await rt.close();
      }
    });
}
