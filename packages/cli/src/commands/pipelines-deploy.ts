import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson, printLines } from '../io';
import { type EnvOptions, peOf, withEnvOptions, withStatus } from './pipelines-shared';

type DeployOptions = ApiOptions & EnvOptions & { pipeline: string; specHash: string; confirm?: string };

export function pipelinesDeployCommand(pipelines: Command) {
  withApiOptions(
    withEnvOptions(
      pipelines
        .command('deploy')
        .description('Deploy a validated version to an environment; runs use it from now on')
        .requiredOption('--pipeline <slug>', 'pipeline slug')
        .requiredOption('--spec-hash <hash>', 'the version: full hash or a unique prefix of 7+ characters')
        .option('--confirm <env_slug>', 'the environment slug again, required by a protected environment'),
    ),
  ).action(async (opts: DeployOptions) => {
    const client = await apiClient(opts);
    const { data: d, status } = await withStatus(
      client.POST(
        '/organizations/{organization}/projects/{project}/environments/{environment}/pipelines/{pipeline}:deploy',
        {
          params: { path: { ...peOf(opts), pipeline: opts.pipeline } },
          body: {
            spec_hash: opts.specHash,
            ...(opts.confirm !== undefined ? { protected_environment_confirmation: opts.confirm } : {}),
          },
        },
      ),
    );
    if (opts.json) return printJson({ ...d, created: status === 201 });
    printLines([
      status === 201
        ? `deployed ${d.spec_hash} to ${d.environment_slug} (deployment ${d.slug})`
        : `already active in ${d.environment_slug}: ${d.spec_hash} (deployment ${d.slug})`,
    ]);
  });
}

type UndeployOptions = ApiOptions & EnvOptions & { pipeline: string; confirm?: string };

export function pipelinesUndeployCommand(pipelines: Command) {
  withApiOptions(
    withEnvOptions(
      pipelines
        .command('undeploy')
        .description(
          'Undeploy a pipeline from an environment: no more runs there; the captures of its cdc steps are dropped (docs/cdc.md)',
        )
        .requiredOption('--pipeline <slug>', 'pipeline slug')
        .option('--confirm <env_slug>', 'the environment slug again, required by a protected environment'),
    ),
  ).action(async (opts: UndeployOptions) => {
    const client = await apiClient(opts);
    const { data: d } = await withStatus(
      client.POST(
        '/organizations/{organization}/projects/{project}/environments/{environment}/pipelines/{pipeline}:undeploy',
        {
          params: {
            path: { ...peOf(opts), pipeline: opts.pipeline },
            ...(opts.confirm !== undefined
              ? { query: { protected_environment_confirmation: opts.confirm } }
              : {}),
          },
        },
      ),
    );
    if (opts.json) return printJson(d);
    printLines([`undeployed ${d.spec_hash} from ${d.environment_slug} (deployment ${d.slug})`]);
  });
}
