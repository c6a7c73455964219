import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { CliError, ExitCode } from '../exit';
import { printJson, printLines, printTable } from '../io';
import {
  assertOneStdinUse,
  type EnvOptions,
  peOf,
  readSpecFile,
  type Validation,
  withEnvOptions,
  withStatus,
} from './pipelines-shared';

type ValidateOptions = ApiOptions & EnvOptions & { pipeline: string; specHash?: string; file?: string };

export function printFindings(v: Validation) {
  if (v.findings.length > 0) {
    printTable(v.findings, [
      { header: 'SEVERITY', value: (f) => f.severity },
      { header: 'CODE', value: (f) => f.code },
      { header: 'PATH', value: (f) => f.path },
      { header: 'MESSAGE', value: (f) => f.message },
    ]);
    printLines(['']);
  }
  const errors = v.findings.filter((f) => f.severity === 'error').length;
  printLines([
    `${v.valid ? 'valid' : `invalid (${errors} error${errors === 1 ? '' : 's'})`}: validation ${v.slug} of ${v.spec_hash} in ${v.environment_slug}`,
  ]);
}

export function pipelinesValidateCommand(pipelines: Command) {
  withApiOptions(
    withEnvOptions(
      pipelines
        .command('validate')
        .description(
          'Validate a pushed version (--spec-hash) or a draft spec file (--file) in an environment; exit 1 when invalid',
        )
        .requiredOption('--pipeline <slug>', 'pipeline slug')
        .option('--spec-hash <hash>', 'a pushed version: full hash or a unique prefix of 7+ characters')
        .option('--file <path>', 'a draft spec checked without being pushed; - reads standard input'),
    ),
  ).action(async (opts: ValidateOptions) => {
    if ((opts.specHash === undefined) === (opts.file === undefined)) {
      throw new CliError(ExitCode.failed, 'pass exactly one of --spec-hash and --file');
    }
    assertOneStdinUse(opts.tokenStdin, opts.file, '--file');
    const spec = opts.file !== undefined ? await readSpecFile(opts.file) : undefined;
    const client = await apiClient(opts);
    const { data: v } = await withStatus(
      client.POST(
        '/organizations/{organization}/projects/{project}/environments/{environment}/pipeline-validation',
        {
          params: { path: peOf(opts) },
          // Exactly one of spec and spec_hash (checked above; the body is a oneOf).
          body:
            spec !== undefined
              ? { pipeline_slug: opts.pipeline, spec }
              : { pipeline_slug: opts.pipeline, spec_hash: opts.specHash ?? '' },
        },
      ),
    );
    if (opts.json) printJson(v);
    else printFindings(v);
    if (!v.valid) throw new CliError(ExitCode.failed, `the spec is not valid in ${v.environment_slug}`);
  });
}
