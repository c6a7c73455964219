import { unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { orgOption } from '../flags';
import { printJson } from '../io';
import { printDestinationTable } from './alerts-format';

type CreateOptions = ApiOptions & {
  org: string;
  name: string;
  slug?: string;
  email: string[];
  disabled?: boolean;
};

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function alertsDestinationsCreateCommand(group: Command) {
  withApiOptions(
    group
      .command('create')
      .description('Create an email alert destination')
      .addOption(orgOption())
      .requiredOption('--name <name>', 'display name')
      .option('--slug <slug>', 'slug (default: from the name)')
      .requiredOption('--email <address>', 'a recipient; repeat for more', collect)
      .option('--disabled', 'create it disabled'),
  ).action(async (opts: CreateOptions) => {
    const client = await apiClient(opts);
    const d = await unwrap(
      client.POST('/organizations/{organization}/alert-destinations', {
        params: { path: { organization: opts.org } },
        body: {
          name: opts.name,
          ...(opts.slug ? { slug: opts.slug } : {}),
          type: 'email',
          non_secret_config: { recipients: opts.email },
          enabled: !opts.disabled,
        },
      }),
    );
    if (opts.json) return printJson(d);
    printDestinationTable([d]);
  });
}
