import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson } from '../io';
import { printBillingProfile } from './billing-format';
import { assertOneStdinUse, readSpecFile, withStatus } from './pipelines-shared';

type SetOptions = ApiOptions & { org?: string; file: string };

export function billingSetCommand(billing: Command) {
  withApiOptions(
    billing
      .command('set')
      .description("Create or replace your billing profile, or an organization's with --org")
      .requiredOption('-f, --file <file>', 'the whole profile as JSON (`-` reads standard input)')
      .option('--org <slug>', "the organization's profile instead of your own"),
  ).action(async (opts: SetOptions) => {
    assertOneStdinUse(opts.tokenStdin, opts.file, '--file');
    const client = await apiClient(opts);
    const body = (await readSpecFile(opts.file)) as any;
    const { data, status } = opts.org
      ? await withStatus(
          client.PUT('/organizations/{organization}/billing-profile', {
            params: { path: { organization: opts.org } },
            body,
          }),
        )
      : await withStatus(client.PUT('/users/me/billing-profile', { body }));
    if (opts.json) return printJson(data);
    process.stderr.write(status === 201 ? 'billing profile created\n' : 'billing profile replaced\n');
    printBillingProfile(data);
  });
}
