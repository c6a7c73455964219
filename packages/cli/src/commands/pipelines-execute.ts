import fs from 'node:fs';
import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { CliError, ExitCode } from '../exit';
import { printJson, printLines, readStdin } from '../io';
import { assertOneStdinUse, type EnvOptions, peOf, withEnvOptions, withStatus } from './pipelines-shared';
import { displayModeOf, exitForRun, followRun, intervalMs } from './runs-follow';

type ExecuteOptions = ApiOptions &
  EnvOptions & {
    pipeline: string;
    input: string[];
    inputJson?: string;
    runSlug?: string;
    confirm?: string;
    wait?: boolean;
    interval?: string;
  };

const INPUT_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const bad = (message: string) => new CliError(ExitCode.failed, message);

/**
 * The run's input from --input-json and --input (which wins per key). Input values may be
 * sensitive: no message here repeats one, not even part of a malformed argument.
 */
async function inputOf(opts: ExecuteOptions): Promise<Record<string, unknown> | undefined> {
  if (opts.inputJson === undefined && opts.input.length === 0) return undefined;
  let input: Record<string, unknown> = {};
  if (opts.inputJson !== undefined) {
    let text: string;
    try {
      text = opts.inputJson === '-' ? await readStdin() : fs.readFileSync(opts.inputJson, 'utf8');
    } catch (err) {
      throw bad(
        `cannot read --input-json ${opts.inputJson} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // JSON.parse's message quotes the text it failed on.
      throw bad(`--input-json ${opts.inputJson} is not valid JSON`);
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      throw bad(`--input-json ${opts.inputJson} must hold a JSON object of input values`);
    }
    input = value as Record<string, unknown>;
  }
  opts.input.forEach((arg, i) => {
    const at = arg.indexOf('=');
    if (at < 0) throw bad(`--input #${i + 1} must be KEY=VALUE`);
    const key = arg.slice(0, at);
    if (!INPUT_KEY.test(key) || key.length > 100) {
      throw bad(
        `--input #${i + 1}: the key before "=" must match ${INPUT_KEY.source} (at most 100 characters)`,
      );
    }
    input[key] = arg.slice(at + 1);
  });
  return input;
}

export function pipelinesExecuteCommand(pipelines: Command) {
  withApiOptions(
    withEnvOptions(
      pipelines
        .command('execute')
        .description('Run the deployed version of a pipeline; --wait follows the run like runs watch')
        .requiredOption('--pipeline <slug>', 'pipeline slug')
        .option(
          '--input <key=value>',
          'an input value (repeatable; a string). Values are never printed',
          (v: string, prev: string[]) => [...prev, v],
          [] as string[],
        )
        .option(
          '--input-json <path>',
          'a JSON object of input values (any JSON types; - reads standard input); keeps values out of the process list',
        )
        .option(
          '--run-slug <slug>',
          'choose the run slug; repeating it returns that run instead of starting another',
        )
        .option('--confirm <env_slug>', 'the environment slug again, required by a protected environment')
        .option('--wait', 'follow the run until it ends; exit 1 when it fails or is canceled')
        .option('--interval <seconds>', 'with --wait: seconds between polls (default 1)'),
    ),
  ).action(async (opts: ExecuteOptions) => {
    assertOneStdinUse(opts.tokenStdin, opts.inputJson, '--input-json');
    const interval = intervalMs(opts.interval);
    const input = await inputOf(opts);
    const client = await apiClient(opts);
    const { data: run, status } = await withStatus(
      client.POST(
        '/organizations/{organization}/projects/{project}/environments/{environment}/pipelines/{pipeline}:execute',
        {
          params: { path: { ...peOf(opts), pipeline: opts.pipeline } },
          body: {
            ...(input !== undefined ? { input } : {}),
            ...(opts.runSlug !== undefined ? { run_slug: opts.runSlug } : {}),
            ...(opts.confirm !== undefined ? { protected_environment_confirmation: opts.confirm } : {}),
          },
        },
      ),
    );
    const created = status === 202;
    if (!opts.wait) {
      if (opts.json) return printJson({ ...run, created });
      return printLines([
        created ? `run ${run.slug} ${run.state}` : `run ${run.slug} already exists: ${run.state}`,
        `follow it: sluice runs watch --org ${opts.org} --project ${opts.project} --env ${opts.env} ${run.slug}`,
      ]);
    }
    const mode = displayModeOf(opts.json, process.stdout);
    if (!created && mode !== 'json') process.stderr.write(`run ${run.slug} already exists; following it\n`);
    const final = await followRun(client, {
      ...opts,
      runSlug: run.slug,
      mode,
      intervalMs: interval,
      out: process.stdout,
    });
    exitForRun(final);
  });
}
