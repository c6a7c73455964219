import fs from 'node:fs';
import { type paths, unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { CliError, ExitCode } from '../exit';
import { orgOption } from '../flags';
import { readStdin } from '../io';

// What the pipeline and run commands share: the scope flags, the spec file, and calls whose
// status code matters (201 new / 200 already there).

const PE = '/organizations/{organization}/projects/{project}/environments/{environment}';
type Json<P extends keyof paths, M extends keyof paths[P], S extends number> = paths[P][M] extends {
  responses: { [K in S]: { content: { 'application/json': infer T } } };
}
  ? T
  : never;

export type Run = Json<`${typeof PE}/runs/{run_slug}`, 'get', 200>;
export type RunStep = Run['steps'][number];
export type RunLog = Json<`${typeof PE}/runs/{run_slug}/logs`, 'get', 200>['logs'][number];
export type Validation = Json<`${typeof PE}/pipeline-validation`, 'post', 201>;

export type ProjectOptions = { org: string; project: string };
export type EnvOptions = ProjectOptions & { env: string };

export function withProjectOptions(cmd: Command): Command {
  return cmd.addOption(orgOption()).requiredOption('--project <slug>', 'project slug');
}

export function withEnvOptions(cmd: Command): Command {
  return withProjectOptions(cmd).requiredOption('--env <slug>', 'environment slug');
}

/** The path parameters of every environment-aware route. */
export const peOf = (o: EnvOptions) => ({ organization: o.org, project: o.project, environment: o.env });

/** A spec file (`-` reads standard input) as a JSON object. */
export async function readSpecFile(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = file === '-' ? await readStdin() : fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(ExitCode.failed, `cannot read ${file}: ${(err as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CliError(ExitCode.failed, `${file} is not JSON: ${(err as Error).message}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new CliError(ExitCode.failed, `${file} must hold a JSON object (the pipeline spec)`);
  }
  return value as Record<string, unknown>;
}

/** The body and the status code of a call (the middleware already threw for non-2xx). */
export async function withStatus<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<{ data: T; status: number }> {
  const result = await call;
  return { data: await unwrap(Promise.resolve(result)), status: result.response.status };
}

/** `--token-stdin` and a spec or input read from standard input cannot share it. */
export function assertOneStdinUse(tokenStdin: boolean | undefined, file: string | undefined, flag: string) {
  if (tokenStdin && file === '-') {
    throw new CliError(ExitCode.failed, `--token-stdin and ${flag} - both read standard input; use one`);
  }
}
