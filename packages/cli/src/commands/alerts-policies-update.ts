import { unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { orgOption } from '../flags';
import { printJson } from '../io';
import { printPolicyTable } from './alerts-format';

type UpdateOptions = ApiOptions & {
  org: string;
  name?: string;
  destination?: string[];
  enable?: boolean;
  disable?: boolean;
};

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function alertsPoliciesUpdateCommand(group: Command) {
  withApiOptions(
    group
      .command('update')
      .description('Rename an alert policy, replace its destinations, enable or disable it')
      .argument('<policy_slug>', 'slug of the policy')
      .addOption(orgOption())
      .option('--name <name>', 'new display name')
      .option('--destination <slug>', 'replace the destinations; repeat for more', collect)
      .option('--enable', 'enable it')
      .option('--disable', 'disable it'),
  ).action(async (slug: string, opts: UpdateOptions) => {
    const client = await apiClient(opts);
    const p = await unwrap(
      client.PATCH('/organizations/{organization}/alert-policies/{alert_policy_slug}', {
        params: { path: { organization: opts.org, alert_policy_slug: slug } },
        body: {
          ...(opts.name ? { name: opts.name } : {}),
          ...(opts.destination ? { destination_slugs: opts.destination } : {}),
          ...(opts.enable ? { enabled: true } : opts.disable ? { enabled: false } : {}),
        },
      }),
    );
    if (opts.json) return printJson(p);
    printPolicyTable([p]);
  });
}
