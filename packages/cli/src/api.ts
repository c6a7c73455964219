import { createClient, type SluiceClient } from '@sluice/client';
import type { Command } from 'commander';
import { CliError, ExitCode } from './exit';
import { readStdinLine } from './io';
import { activeProfile, profileToken } from './profile';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

export type ApiOptions = { baseUrl?: string; tokenStdin?: boolean; json?: boolean };

/** The options every command that talks to the API host shares. */
export function withApiOptions(cmd: Command): Command {
  return (
    cmd
      // The CLI's own settings, not the server's configuration (which env.ts owns).
      .option(
        '--base-url <url>',
        `API host address (default: env SLUICE_BASE_URL, the login profile, else ${DEFAULT_BASE_URL})`,
      )
      .option(
        '--token-stdin',
        'read the API token from standard input instead of SLUICE_TOKEN or the profile',
      )
      .option('--json', 'print machine-readable JSON')
  );
}

/** --base-url, else SLUICE_BASE_URL, else the active profile's, else the default. */
export function baseUrlOf(opts: { baseUrl?: string }): URL {
  const value = opts.baseUrl || process.env.SLUICE_BASE_URL || activeProfile()?.base_url || DEFAULT_BASE_URL;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(ExitCode.failed, `--base-url is not a URL: ${value}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(ExitCode.failed, `--base-url must be http(s): ${value}`);
  }
  return url;
}

/**
 * The typed client with the caller's token. Tokens come from standard input, SLUICE_TOKEN or
 * the active profile's token file, never from a flag value, so they stay out of shell history
 * and process listings.
 */
export async function apiClient(opts: ApiOptions): Promise<SluiceClient> {
  const url = baseUrlOf(opts);
  const profile = activeProfile();
  const token = opts.tokenStdin
    ? (await readStdinLine()).trim()
    : process.env.SLUICE_TOKEN?.trim() || (profile ? profileToken(profile.name) : undefined);
  if (!token) {
    throw new CliError(
      ExitCode.failed,
      'no API token: run sluice login (or sluice setup), set SLUICE_TOKEN or pass --token-stdin',
    );
  }
  return createClient({ baseUrl: url.toString(), token });
}

/** A client without a token, for the public routes (setup). */
export function publicClient(opts: { baseUrl?: string }): SluiceClient {
  return createClient({ baseUrl: baseUrlOf(opts).toString() });
}
