import { createClient, unwrap } from '@sluice/client';
import type { Command } from 'commander';
import { DEFAULT_BASE_URL } from '../api';
import { printJson } from '../io';

type KeysOptions = { baseUrl: string };

/** Public and unauthenticated: the keys a receipt verifier trusts, saved for offline use. */
export function proofKeysCommand(proof: Command) {
  proof
    .command('keys')
    .description("Print the deployment's public receipt keys (save them for `sluice proof verify --keys`)")
    .option('--base-url <url>', 'API host address', process.env.SLUICE_BASE_URL || DEFAULT_BASE_URL)
    .action(async (opts: KeysOptions) => {
      printJson(await unwrap(createClient({ baseUrl: opts.baseUrl }).GET('/proof-keys')));
    });
}
