import { unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { orgOption } from '../flags';
import { printJson } from '../io';
import { printDestinationTable } from './alerts-format';

type UpdateOptions = ApiOptions & {
  org: string;
  name?: string;
  email?: string[];
  enable?: boolean;
  disable?: boolean;
};

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function alertsDestinationsUpdateCommand(group: Command) {
  withApiOptions(
    group
      .command('update')
      .description('Rename, re-address, enable or disable an alert destination')
      .argument('<destination_slug>', 'slug of the destination')
      .addOption(orgOption())
      .option('--name <name>', 'new display name')
      .option('--email <address>', 'replace the recipients; repeat for more', collect)
      .option('--enable', 'enable it')
      .option('--disable', 'disable it'),
  ).action(async (slug: string, opts: UpdateOptions) => {
    const client = await apiClient(opts);
    const d = await unwrap(
      client.PATCH('/organizations/{organization}/alert-destinations/{alert_destination_slug}', {
        params: { path: { organization: opts.org, alert_destination_slug: slug } },
        body: {
          ...(opts.name ? { name: opts.name } : {}),
          ...(opts.email ? { non_secret_config: { recipients: opts.email } } : {}),
          ...(opts.enable ? { enabled: true } : opts.disable ? { enabled: false } : {}),
        },
      }),
    );
    if (opts.json) return printJson(d);
    printDestinationTable([d]);
  });
}
