import type { Command } from 'commander';
import { apiClient, baseUrlOf } from '../api';
import { CliError, ExitCode } from '../exit';
import { printJson, printLines, readStdinLine } from '../io';
import { saveProfile } from '../profile';
import { call, type Row } from '../resource';

type LoginOptions = { baseUrl?: string; profile: string; org?: string; json?: boolean };

export function loginCommand(program: Command) {
  program
    .command('login')
    .description(
      'Store a profile: the API address, a default organization and a token (read from standard input) ' +
        'in a file with mode 0600; later commands use it when SLUICE_TOKEN is not set',
    )
    .option('--base-url <url>', 'API host address (default: env SLUICE_BASE_URL, else http://127.0.0.1:8080)')
    .option('--profile <name>', 'profile name (SLUICE_PROFILE selects one later)', 'default')
    .option('--org <slug>', 'default organization (default: the only one the token can see)')
    .option('--json', 'print machine-readable JSON')
    .action(async (opts: LoginOptions) => {
      if (process.stdin.isTTY)
        process.stderr.write('Paste the API key or personal access token, then Enter:\n');
      const token = (await readStdinLine()).trim();
      if (!token) throw new CliError(ExitCode.failed, 'no token on standard input');
      const baseUrl = baseUrlOf(opts).toString().replace(/\/+$/, '');
      // The token is checked before it is stored: a typo fails now, not on the next command.
      process.env.SLUICE_TOKEN = token;
      const client = await apiClient({ baseUrl });
      const { data } = await call<{ organizations: Row[] }>(client, 'GET', '/organizations', {
        query: { limit: 2 },
      });
      const orgs = data.organizations.map((o) => String(o.slug));
      const org = opts.org ?? (orgs.length === 1 ? orgs[0] : undefined);
      const file = saveProfile(
        opts.profile,
        { base_url: baseUrl, ...(org ? { organization: org } : {}) },
        token,
      );
      if (opts.json)
        return printJson({
          profile: opts.profile,
          base_url: baseUrl,
          organization: org ?? null,
          token_file: file,
        });
      printLines([
        `logged in to ${baseUrl} as profile ${opts.profile}${org ? `, organization ${org}` : ''}`,
        `token stored in ${file} (mode 0600)`,
      ]);
    });
}
