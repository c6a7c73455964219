import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson, printLines, printTable } from '../io';
import { type ProjectOptions, withProjectOptions, withStatus } from './pipelines-shared';

type GetOptions = ApiOptions & ProjectOptions & { contract: string };

export function contractsGetCommand(contracts: Command) {
  withApiOptions(
    withProjectOptions(
      contracts
        .command('get')
        .description('Show a data contract and its revisions')
        .requiredOption('--contract <slug>', 'contract slug'),
    ),
  ).action(async (opts: GetOptions) => {
    const client = await apiClient(opts);
    const path = { organization: opts.org, project: opts.project, contract_slug: opts.contract };
    const { data: contract } = await withStatus(
      client.GET('/organizations/{organization}/projects/{project}/contracts/{contract_slug}', {
        params: { path },
      }),
    );
    const { data: revisions } = await withStatus(
      client.GET('/organizations/{organization}/projects/{project}/contracts/{contract_slug}/revisions', {
        params: { path, query: { limit: 100 } },
      }),
    );
    if (opts.json) return printJson({ ...contract, revisions: revisions.revisions });
    printLines([
      `contract ${contract.slug} (${contract.name}) on ${contract.target.pipeline_slug}/${contract.target.step_slug}`,
      `latest revision: ${contract.latest_revision_slug ?? '-'}`,
      '',
    ]);
    printTable(revisions.revisions, [
      { header: 'REVISION', value: (r) => r.slug },
      { header: 'BASED_ON', value: (r) => r.based_on },
      { header: 'COMPATIBILITY', value: (r) => r.compatibility },
      { header: 'COLUMNS', value: (r) => String(r.columns.length) },
      { header: 'RULES', value: (r) => String(r.quality.length) },
      { header: 'DIGEST', value: (r) => r.digest },
    ]);
  });
}
