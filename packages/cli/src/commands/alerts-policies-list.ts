import { unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { orgOption } from '../flags';
import { printJson } from '../io';
import { pageSize, printPolicyTable } from './alerts-format';

export function alertsPoliciesListCommand(group: Command) {
  withApiOptions(
    group
      .command('list')
      .description('List alert policies')
      .addOption(orgOption())
      .option('--limit <n>', 'page size, 1 to 100', pageSize, 20)
      .option('--cursor <cursor>', 'continue from a previous page (its next_cursor)'),
  ).action(async (opts: ApiOptions & { org: string; limit: number; cursor?: string }) => {
    const client = await apiClient(opts);
    const page = await unwrap(
      client.GET('/organizations/{organization}/alert-policies', {
        params: { path: { organization: opts.org }, query: { limit: opts.limit, cursor: opts.cursor } },
      }),
    );
    if (opts.json) return printJson(page);
    printPolicyTable(page.alert_policies);
    if (page.has_more) process.stderr.write(`more policies: --cursor ${page.next_cursor}\n`);
  });
}
