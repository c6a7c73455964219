import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson } from '../io';
import { printReportList } from './drift-format';
import { type ProjectOptions, withProjectOptions, withStatus } from './pipelines-shared';

type ListOptions = ApiOptions & ProjectOptions & { dataSource?: string; limit: string; cursor?: string };

export function driftListCommand(drift: Command) {
  withApiOptions(
    withProjectOptions(
      drift
        .command('list')
        .description("List drift reports, newest first: a project's, or a data source's with --data-source")
        .option('--data-source <slug>', "the reports of this data source instead of the project's")
        .option('--limit <n>', 'page size, 1 to 100', '20')
        .option('--cursor <cursor>', 'continue from a previous page (its next_cursor)'),
    ),
  ).action(async (opts: ListOptions) => {
    const client = await apiClient(opts);
    const query = { limit: Number(opts.limit), cursor: opts.cursor };
    const { data: page } = opts.dataSource
      ? await withStatus(
          client.GET('/organizations/{organization}/data-sources/{data_source}/drift-reports', {
            params: { path: { organization: opts.org, data_source: opts.dataSource }, query },
          }),
        )
      : await withStatus(
          client.GET('/organizations/{organization}/projects/{project}/drift-reports', {
            params: { path: { organization: opts.org, project: opts.project }, query },
          }),
        );
    if (opts.json) return printJson(page);
    printReportList(page.reports);
    if (page.has_more) process.stderr.write(`more reports: --cursor ${page.next_cursor}\n`);
  });
}
