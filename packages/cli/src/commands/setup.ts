import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { baseUrlOf, publicClient } from '../api';
import { CliError, ExitCode } from '../exit';
import { printJson, printLines, readStdin } from '../io';
import { saveProfile } from '../profile';
import { call } from '../resource';

type SetupOptions = {
  baseUrl?: string;
  org: string;
  email: string;
  name?: string;
  passwordStdin?: boolean;
  codeFile?: string;
  codeStdin?: boolean;
  profile: string;
  save: boolean;
  json?: boolean;
};

type SetupResult = {
  organization_slug: string;
  user_slug: string;
  api_key: string;
  personal_access_token: string;
};

/** The code `sluice serve` wrote: --code-stdin, else --code-file, else the data directory's. */
async function setupCode(opts: SetupOptions): Promise<string> {
  if (opts.codeStdin) return (await readStdin()).split(/\r?\n/, 1)[0].trim();
  const file = opts.codeFile ?? path.join(process.env.SLUICE_DATA_DIR || '.sluice', 'setup-code');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    throw new CliError(
      ExitCode.failed,
      `no setup code at ${file}: pass --code-file (the path sluice serve printed) or --code-stdin`,
    );
  }
}

export function setupCommand(program: Command) {
  program
    .command('setup')
    .description(
      'First run against a running server: trade the setup code `sluice serve` printed for the first ' +
        'organization, an owner API key (stored as a login profile) and a personal access token',
    )
    .requiredOption('--org <slug>', 'slug of the first organization')
    .requiredOption('--email <email>', "the first user's email")
    .option('--name <name>', "the first user's display name")
    .option('--password-stdin', 'read a password for the first user (app sign-in) from standard input')
    .option(
      '--code-file <path>',
      'the setup code file (default: $SLUICE_DATA_DIR or ./.sluice, then setup-code)',
    )
    .option('--code-stdin', 'read the setup code from standard input')
    .option('--base-url <url>', 'API host address (default: env SLUICE_BASE_URL, else http://127.0.0.1:8080)')
    .option('--profile <name>', 'login profile to store the API key in', 'default')
    .option('--no-save', 'do not store a profile; print both tokens instead')
    .option('--json', 'print the result as JSON (includes both tokens)')
    .action(async (opts: SetupOptions) => {
      if (opts.codeStdin && opts.passwordStdin) {
        throw new CliError(
          ExitCode.failed,
          '--code-stdin and --password-stdin both read standard input; use one',
        );
      }
      const code = await setupCode(opts);
      const password = opts.passwordStdin ? (await readStdin()).replace(/\r?\n$/, '') : undefined;
      const baseUrl = baseUrlOf(opts).toString().replace(/\/+$/, '');
      const { data } = await call<SetupResult>(publicClient({ baseUrl }), 'POST', '/setup', {
        body: {
          setup_code: code,
          organization_slug: opts.org,
          email: opts.email,
          ...(opts.name ? { name: opts.name } : {}),
          ...(password !== undefined ? { password } : {}),
        },
      });
      const file = opts.save
        ? saveProfile(opts.profile, { base_url: baseUrl, organization: data.organization_slug }, data.api_key)
        : null;
      if (opts.json) return printJson({ ...data, profile: file ? opts.profile : null, token_file: file });
      printLines([
        `organization ${data.organization_slug} created; you are its owner (user ${data.user_slug})`,
        ...(file
          ? [`owner API key stored in profile ${opts.profile} (${file}, mode 0600)`]
          : [`owner API key (shown once): ${data.api_key}`]),
        `personal access token (shown once; keep it safe): ${data.personal_access_token}`,
        '',
        'Next: npx sluice apply -f examples/first-pipeline   (see examples/README.md)',
      ]);
    });
}
