import { unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { orgOption } from '../flags';
import { printJson } from '../io';

export function alertsPoliciesDeleteCommand(group: Command) {
  withApiOptions(
    group
      .command('delete')
      .description('Delete an alert policy')
      .argument('<policy_slug>', 'slug of the policy')
      .addOption(orgOption()),
  ).action(async (slug: string, opts: ApiOptions & { org: string }) => {
    const client = await apiClient(opts);
    await unwrap(
      client.DELETE('/organizations/{organization}/alert-policies/{alert_policy_slug}', {
        params: { path: { organization: opts.org, alert_policy_slug: slug } },
      }),
    );
    if (opts.json) return printJson({ deleted: slug });
    process.stdout.write(`deleted ${slug}\n`);
  });
}
