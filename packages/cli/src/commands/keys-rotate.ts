import type { Command } from 'commander';
import { printJson, printLines } from '../io';
import { withStoreRuntime } from '../store';

// Works on the store directly, like `migrate`: re-sealing needs the master key, which only the
// server processes hold; no API route can do it.
export function keysRotateCommand(keys: Command) {
  keys
    .command('rotate')
    .description(
      'Add a new data-encryption key and re-encrypt every stored secret and credential under it ' +
        '(needs the store and the master key; safe to run again after an interruption)',
    )
    .option('--json', 'print the result as JSON')
    .action(async (opts: { json?: boolean }) => {
      const report = await withStoreRuntime((server, rt) => server.rotateKeys(rt.deps.db, rt.deps.keyring));
      if (opts.json) printJson(report);
      else
        printLines([
          `new data key: ${report.kid}`,
          `re-encrypted: ${report.reencrypted}`,
          ...Object.entries(report.tables).map(([kind, n]) => `  ${kind}: ${n}`),
        ]);
    });
}
