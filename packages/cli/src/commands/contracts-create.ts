import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson, printLines } from '../io';
import { type ProjectOptions, withProjectOptions, withStatus } from './pipelines-shared';

type CreateOptions = ApiOptions &
  ProjectOptions & { name: string; slug?: string; pipeline: string; step: string; description?: string };

export function contractsCreateCommand(contracts: Command) {
  withApiOptions(
    withProjectOptions(
      contracts
        .command('create')
        .description('Create a data contract on a pipeline sink')
        .requiredOption('--name <name>', 'display name')
        .option('--slug <slug>', 'contract slug (default: from the name)')
        .requiredOption('--pipeline <slug>', 'pipeline')
        .requiredOption('--step <slug>', 'the sink step whose output the contract describes')
        .option('--description <text>', 'free text'),
    ),
  ).action(async (opts: CreateOptions) => {
    const client = await apiClient(opts);
    const { data } = await withStatus(
      client.POST('/organizations/{organization}/projects/{project}/contracts', {
        params: { path: { organization: opts.org, project: opts.project } },
        body: {
          name: opts.name,
          ...(opts.slug ? { slug: opts.slug } : {}),
          ...(opts.description ? { description: opts.description } : {}),
          target: { pipeline_slug: opts.pipeline, step_slug: opts.step },
        },
      }),
    );
    if (opts.json) return printJson(data);
    printLines([`created contract ${data.slug} on ${data.target.pipeline_slug}/${data.target.step_slug}`]);
  });
}
