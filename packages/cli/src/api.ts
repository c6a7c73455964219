import { createClient, type SluiceClient } from '@sluice/client';
import type { Command } from 'commander';
import { CliError, ExitCode } from './exit';
import { readStdinLine } from './io';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

export type ApiOptions = { baseUrl: string; tokenStdin?: boolean; json?: boolean };

/** The options every command that talks to the API host shares. */
export function withApiOptions(cmd: Command): Command {
  return (
    cmd
      // The CLI's own settings, not the server's configuration (which env.ts owns).
      .option(
        '--base-url <url>',
        `API host address (env SLUICE_BASE_URL, default ${DEFAULT_BASE_URL})`,
        process.env.SLUICE_BASE_URL || DEFAULT_BASE_URL,
      )
      .option('--token-stdin', 'read the API token from standard input instead of SLUICE_TOKEN')
      .option('--json', 'print machine-readable JSON')
  );
}

/**
 * The typed client with the caller's token. Tokens come from SLUICE_TOKEN or standard input,
 * never from a flag value, so they stay out of shell history and process listings.
 */
export async function apiClient(opts: ApiOptions): Promise<SluiceClient> {
  const token = opts.tokenStdin ? (await readStdinLine()).trim() : process.env.SLUICE_TOKEN?.trim();
  if (!token) {
    throw new CliError(ExitCode.failed, 'no API token: set SLUICE_TOKEN or pass --token-stdin');
  }
  let url: URL;
  try {
    url = new URL(opts.baseUrl);
  } catch {
    throw new CliError(ExitCode.failed, `--base-url is not a URL: ${opts.baseUrl}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(ExitCode.failed, `--base-url must be http(s): ${opts.baseUrl}`);
  }
  return createClient({ baseUrl: url.toString(), token });
}
