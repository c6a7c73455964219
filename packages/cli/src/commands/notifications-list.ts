import { unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { hiddenAlias, orgOption } from '../flags';
import { printJson } from '../io';
import { pageSize, printNotificationTable } from './alerts-format';

type ListOptions = ApiOptions & {
  org: string;
  project?: string;
  env?: string;
  state?: 'open' | 'acknowledged' | 'resolved';
  type?: string;
  severity?: 'info' | 'warning' | 'error' | 'critical';
  limit: number;
  cursor?: string;
};

export function notificationsListCommand(group: Command) {
  withApiOptions(
    group
      .command('list')
      .description('List notifications, most recently seen first')
      .addOption(orgOption())
      .option('--project <slug>', 'only this project')
      .option('--env <slug>', 'only this environment')
      .addOption(hiddenAlias('--environment <slug>', 'env'))
      .option('--state <state>', 'open, acknowledged or resolved')
      .option('--type <type>', 'notification type, e.g. pipeline_run_failed')
      .option('--severity <severity>', 'info, warning, error or critical')
      .option('--limit <n>', 'page size, 1 to 100', pageSize, 20)
      .option('--cursor <cursor>', 'continue from a previous page (its next_cursor)'),
  ).action(async (opts: ListOptions) => {
    const client = await apiClient(opts);
    const page = await unwrap(
      client.GET('/organizations/{organization}/notifications', {
        params: {
          path: { organization: opts.org },
          query: {
            limit: opts.limit,
            cursor: opts.cursor,
            project_slug: opts.project,
            environment_slug: opts.env,
            lifecycle_state: opts.state,
            notification_type: opts.type as any,
            severity: opts.severity,
          },
        },
      }),
    );
    if (opts.json) return printJson(page);
    printNotificationTable(page.notifications);
    if (page.has_more) process.stderr.write(`more notifications: --cursor ${page.next_cursor}\n`);
  });
}
