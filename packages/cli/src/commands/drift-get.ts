import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson } from '../io';
import { printReport } from './drift-format';
import { type ProjectOptions, withProjectOptions, withStatus } from './pipelines-shared';

type GetOptions = ApiOptions & ProjectOptions & { report: string };

export function driftGetCommand(drift: Command) {
  withApiOptions(
    withProjectOptions(
      drift
        .command('get')
        .description('Show one drift report: its changes and its impacts on pipelines')
        .requiredOption('--report <slug>', 'report slug'),
    ),
  ).action(async (opts: GetOptions) => {
    const client = await apiClient(opts);
    const { data } = await withStatus(
      client.GET('/organizations/{organization}/projects/{project}/drift-reports/{report_slug}', {
        params: { path: { organization: opts.org, project: opts.project, report_slug: opts.report } },
      }),
    );
    if (opts.json) return printJson(data);
    printReport(data);
  });
}
