import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson, printTable } from '../io';
import { type ProjectOptions, withProjectOptions, withStatus } from './pipelines-shared';

export function contractsListCommand(contracts: Command) {
  withApiOptions(
    withProjectOptions(contracts.command('list').description('List the data contracts of a project')),
  ).action(async (opts: ApiOptions & ProjectOptions) => {
    const client = await apiClient(opts);
    const { data } = await withStatus(
      client.GET('/organizations/{organization}/projects/{project}/contracts', {
        params: { path: { organization: opts.org, project: opts.project }, query: { limit: 100 } },
      }),
    );
    if (opts.json) return printJson(data);
    printTable(data.contracts, [
      { header: 'SLUG', value: (c) => c.slug },
      { header: 'PIPELINE', value: (c) => c.target.pipeline_slug },
      { header: 'SINK', value: (c) => c.target.step_slug },
      { header: 'LATEST', value: (c) => c.latest_revision_slug },
      { header: 'NAME', value: (c) => c.name },
    ]);
  });
}
