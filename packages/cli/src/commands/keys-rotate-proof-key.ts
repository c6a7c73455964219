import type { Command } from 'commander';
import { printJson, printLines } from '../io';
import { withStoreRuntime } from '../store';

// Works on the store directly, like `keys rotate`: the private signing key is sealed under the
// master key, which only the server processes hold.
export function keysRotateProofKeyCommand(keys: Command) {
  keys
    .command('rotate-proof-key')
    .description(
      "Retire the deployment's proof signing key and make a new one; receipts signed before stay " +
        'verifiable (GET /proof-keys keeps listing the retired public key with its validity)',
    )
    .option('--json', 'print the result as JSON')
    .action(async (opts: { json?: boolean }) => {
      const report = await withStoreRuntime((server, rt) => server.rotateSigningKey(rt.deps));
      if (opts.json) printJson(report);
      else printLines([`new signing key: ${report.keyid}`, `retired: ${report.retired ?? '-'}`]);
    });
}
