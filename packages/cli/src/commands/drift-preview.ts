import type { paths } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson } from '../io';
import { readDocument } from './contracts-shared';
import { printReport } from './drift-format';
import { type EnvOptions, withEnvOptions, withStatus } from './pipelines-shared';

const PREVIEW = '/organizations/{organization}/projects/{project}/pipelines/{pipeline}/drift-preview';
/** The server checks the schema's shape; the CLI sends the file as it is. */
type Body = paths[typeof PREVIEW]['post']['requestBody']['content']['application/json'];

type PreviewOptions = ApiOptions &
  EnvOptions & { pipeline: string; dataSource?: string; schema?: string; spec?: string; specHash?: string };

export function driftPreviewCommand(drift: Command) {
  withApiOptions(
    withEnvOptions(
      drift
        .command('preview')
        .description('Compute the drift report of a candidate schema or a draft spec; nothing is stored')
        .requiredOption('--pipeline <slug>', 'pipeline slug')
        .option('--data-source <slug>', 'the changed data source (needed when the pipeline binds several)')
        .option(
          '--schema <file>',
          'candidate schema, JSON or YAML, in the imported shape (default: the stored one)',
        )
        .option('--spec <file>', 'draft spec, JSON or YAML, instead of the deployed one')
        .option('--spec-hash <hash>', 'a pushed version instead of the deployed one'),
    ),
  ).action(async (opts: PreviewOptions) => {
    const client = await apiClient(opts);
    const { data } = await withStatus(
      client.POST(PREVIEW, {
        params: { path: { organization: opts.org, project: opts.project, pipeline: opts.pipeline } },
        body: {
          environment_slug: opts.env,
          ...(opts.dataSource ? { data_source_slug: opts.dataSource } : {}),
          ...(opts.schema ? { schema: readDocument(opts.schema) as Body['schema'] } : {}),
          ...(opts.spec ? { spec: readDocument(opts.spec) } : {}),
          ...(opts.specHash ? { spec_hash: opts.specHash } : {}),
        },
      }),
    );
    if (opts.json) return printJson(data);
    printReport(data);
  });
}
