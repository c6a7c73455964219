import type { Command } from 'commander';
import { stringify } from 'yaml';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson } from '../io';
import { type ProjectOptions, withProjectOptions, withStatus } from './pipelines-shared';

type RevisionOptions = ApiOptions & ProjectOptions & { contract: string; revision: string; odcs?: boolean };

export function contractsRevisionCommand(contracts: Command) {
  withApiOptions(
    withProjectOptions(
      contracts
        .command('revision')
        .description('Print a revision (YAML; --json for JSON; --odcs for the ODCS v3.1.0 form)')
        .requiredOption('--contract <slug>', 'contract slug')
        .requiredOption('--revision <slug>', 'revision slug')
        .option('--odcs', 'the Open Data Contract Standard v3.1.0 form'),
    ),
  ).action(async (opts: RevisionOptions) => {
    const client = await apiClient(opts);
    const { data } = await withStatus(
      client.GET(
        '/organizations/{organization}/projects/{project}/contracts/{contract_slug}/revisions/{revision_slug}',
        {
          params: {
            path: {
              organization: opts.org,
              project: opts.project,
              contract_slug: opts.contract,
              revision_slug: opts.revision,
            },
            query: { format: opts.odcs ? 'odcs' : 'sluice' },
          },
        },
      ),
    );
    if (opts.json) return printJson(data);
    process.stdout.write(stringify(data));
  });
}
