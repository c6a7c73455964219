import { ApiError, type paths, type SluiceClient, unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson, printLines } from '../io';
import {
  assertOneStdinUse,
  type ProjectOptions,
  readSpecFile,
  withProjectOptions,
  withStatus,
} from './pipelines-shared';

const VERSIONS = '/organizations/{organization}/projects/{project}/pipelines/{pipeline}/versions';
/** The server parses the spec (docs/pipeline-spec.md); the CLI sends the file as it is. */
type SpecBody = paths[typeof VERSIONS]['post']['requestBody']['content']['application/json']['spec'];

type PushOptions = ApiOptions &
  ProjectOptions & { pipeline: string; file: string; name?: string; create?: boolean };

/** Creates the pipeline unless it exists; true when it was created now. */
async function ensurePipeline(client: SluiceClient, opts: PushOptions): Promise<boolean> {
  try {
    await unwrap(
      client.GET('/organizations/{organization}/projects/{project}/pipelines/{pipeline}', {
        params: { path: { organization: opts.org, project: opts.project, pipeline: opts.pipeline } },
      }),
    );
    return false;
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 404) throw err;
  }
  await unwrap(
    client.POST('/organizations/{organization}/projects/{project}/pipelines', {
      params: { path: { organization: opts.org, project: opts.project } },
      body: { name: opts.name ?? opts.pipeline, slug: opts.pipeline },
    }),
  );
  return true;
}

export function pipelinesPushCommand(pipelines: Command) {
  withApiOptions(
    withProjectOptions(
      pipelines
        .command('push')
        .description('Push a spec file as a version of a pipeline (an identical spec is not stored twice)')
        .requiredOption('--pipeline <slug>', 'pipeline slug')
        .requiredOption('--file <path>', 'the spec as JSON (docs/pipeline-spec.md); - reads standard input')
        .option('--create', 'create the pipeline first when it does not exist')
        .option('--name <name>', 'display name of a pipeline created by --create (default: its slug)'),
    ),
  ).action(async (opts: PushOptions) => {
    assertOneStdinUse(opts.tokenStdin, opts.file, '--file');
    const spec = await readSpecFile(opts.file);
    const client = await apiClient(opts);
    const pipelineCreated = opts.create ? await ensurePipeline(client, opts) : false;
    const pushed = await withStatus(
      client.POST(VERSIONS, {
        params: { path: { organization: opts.org, project: opts.project, pipeline: opts.pipeline } },
        body: { spec: spec as SpecBody },
      }),
    ).catch((err) => {
      if (err instanceof ApiError && err.status === 404 && !opts.create) {
        process.stderr.write(`hint: pass --create to create pipeline ${opts.pipeline} first\n`);
      }
      throw err;
    });
    const created = pushed.status === 201;
    if (opts.json) return printJson({ ...pushed.data, created, pipeline_created: pipelineCreated });
    printLines([
      ...(pipelineCreated ? [`created pipeline ${opts.pipeline}`] : []),
      `spec_hash: ${pushed.data.spec_hash}`,
      created ? 'new version' : 'unchanged: this spec was already pushed',
    ]);
  });
}
