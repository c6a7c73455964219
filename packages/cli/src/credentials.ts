import type { Command } from 'commander';
import { parseDocuments } from './document';
import { CliError, ExitCode } from './exit';
import { readStdin } from './io';
import { collect } from './resource';

// Connector credentials never come from a file or a flag value: either from environment
// variables named on the command line (or in an apply file), or as a JSON/YAML object on
// standard input. No message here repeats a value.

export type CredentialOptions = { credentialEnv?: string[]; credentialsStdin?: boolean };

export function withCredentialOptions(cmd: Command): Command {
  return cmd
    .option(
      '--credential-env <field=ENV_VAR>',
      'a credential field read from an environment variable (repeatable), e.g. password=PGPASSWORD',
      collect,
      [] as string[],
    )
    .option('--credentials-stdin', 'read the credentials object (JSON or YAML) from standard input');
}

/** `{field: ENV_VAR}` → `{field: value}`; a missing variable is an error naming it. */
export function credentialsFromEnv(
  map: Record<string, unknown>,
  where: string,
  env: Record<string, string | undefined> = process.env,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, name] of Object.entries(map)) {
    if (typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new CliError(ExitCode.failed, `${where}.${field}: must name an environment variable`);
    }
    const value = env[name];
    if (value === undefined) {
      throw new CliError(ExitCode.failed, `${where}.${field}: environment variable ${name} is not set`);
    }
    out[field] = value;
  }
  return out;
}

let stdinCredentials: Promise<Record<string, unknown>> | undefined;

/** Standard input holds one credentials object; read it once however many times it is asked for. */
export function credentialsFromStdin(): Promise<Record<string, unknown>> {
  stdinCredentials ??= readStdin().then((text) => {
    const docs = parseDocuments(text, 'standard input');
    const value = docs[0];
    if (docs.length !== 1 || !value || typeof value !== 'object' || Array.isArray(value)) {
      throw new CliError(ExitCode.failed, 'standard input must hold one JSON or YAML object of credentials');
    }
    return value as Record<string, unknown>;
  });
  return stdinCredentials;
}

/** The credentials the flags name, or undefined when none were given. */
export async function credentialsOf(opts: CredentialOptions): Promise<Record<string, unknown> | undefined> {
  const fromEnv: Record<string, unknown> = {};
  for (const pair of opts.credentialEnv ?? []) {
    const at = pair.indexOf('=');
    if (at < 1) throw new CliError(ExitCode.failed, `--credential-env ${pair}: expected FIELD=ENV_VAR`);
    Object.assign(fromEnv, credentialsFromEnv({ [pair.slice(0, at)]: pair.slice(at + 1) }, 'credentials'));
  }
  if (!opts.credentialsStdin && Object.keys(fromEnv).length === 0) return undefined;
  return { ...(opts.credentialsStdin ? await credentialsFromStdin() : {}), ...fromEnv };
}

/** Files describe a data source; credentials in one are refused so they never get committed. */
export function refuseInlineCredentials(doc: Record<string, unknown>, where: string) {
  if ('credentials' in doc) {
    throw new CliError(
      ExitCode.failed,
      `${where}: credentials do not belong in a file; use credentials_from_env (apply), --credential-env or --credentials-stdin`,
    );
  }
}
