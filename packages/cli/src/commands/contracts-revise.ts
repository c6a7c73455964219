import type { paths } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson, printLines } from '../io';
import { readDocument, revisionBody } from './contracts-shared';
import { type ProjectOptions, withProjectOptions, withStatus } from './pipelines-shared';

const REVISIONS = '/organizations/{organization}/projects/{project}/contracts/{contract_slug}/revisions';
type Body = paths[typeof REVISIONS]['post']['requestBody']['content']['application/json'];
type ReviseOptions = ApiOptions &
  ProjectOptions & { contract: string; file: string; slug?: string; compatibility?: 'backward' | 'none' };

export function contractsReviseCommand(contracts: Command) {
  withApiOptions(
    withProjectOptions(
      contracts
        .command('revise')
        .description('Create a revision from a JSON or YAML file (Sluice revision or ODCS v3 contract)')
        .requiredOption('--contract <slug>', 'contract slug')
        .requiredOption('--file <path>', 'the revision: columns, quality, freshness (JSON or YAML)')
        .option('--slug <slug>', 'revision slug (default r<n>)')
        .option('--compatibility <mode>', 'backward (default) or none to accept a breaking change'),
    ),
  ).action(async (opts: ReviseOptions) => {
    const body = revisionBody(readDocument(opts.file)) as Body;
    if (opts.slug) body.slug = opts.slug;
    if (opts.compatibility) body.compatibility = opts.compatibility;
    const client = await apiClient(opts);
    const { data } = await withStatus(
      client.POST(REVISIONS, {
        params: { path: { organization: opts.org, project: opts.project, contract_slug: opts.contract } },
        body,
      }),
    );
    if (opts.json) return printJson(data);
    printLines([
      `revision ${data.slug} of ${opts.contract} (based on ${data.based_on ?? 'nothing'})`,
      `digest: ${data.digest}`,
    ]);
  });
}
