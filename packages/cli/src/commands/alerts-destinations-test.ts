import { unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { orgOption } from '../flags';
import { printJson } from '../io';

export function alertsDestinationsTestCommand(group: Command) {
  withApiOptions(
    group
      .command('test')
      .description('Queue one real test message to a destination (no records, no retry)')
      .argument('<destination_slug>', 'slug of the destination')
      .addOption(orgOption()),
  ).action(async (slug: string, opts: ApiOptions & { org: string }) => {
    const client = await apiClient(opts);
    const r = await unwrap(
      client.POST('/organizations/{organization}/alert-destinations/{alert_destination_slug}:test', {
        params: { path: { organization: opts.org, alert_destination_slug: slug } },
      }),
    );
    if (opts.json) return printJson(r);
    process.stdout.write(
      `${r.status}: a test message to ${r.recipient_count} recipient(s) of ${slug} is queued\n`,
    );
  });
}
