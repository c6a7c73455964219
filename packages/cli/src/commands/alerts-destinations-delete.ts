import { unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { orgOption } from '../flags';
import { printJson } from '../io';

export function alertsDestinationsDeleteCommand(group: Command) {
  withApiOptions(
    group
      .command('delete')
      .description('Delete an alert destination (refused while a policy uses it)')
      .argument('<destination_slug>', 'slug of the destination')
      .addOption(orgOption()),
  ).action(async (slug: string, opts: ApiOptions & { org: string }) => {
    const client = await apiClient(opts);
    await unwrap(
      client.DELETE('/organizations/{organization}/alert-destinations/{alert_destination_slug}', {
        params: { path: { organization: opts.org, alert_destination_slug: slug } },
      }),
    );
    if (opts.json) return printJson({ deleted: slug });
    process.stdout.write(`deleted ${slug}\n`);
  });
}
