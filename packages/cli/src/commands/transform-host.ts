import type { Command } from 'commander';
import { CliError, ExitCode } from '../exit';
import { startupDone } from '../startup';

// `sluice transform-host`: not for people. `sluice serve` on the embedded store starts it as a
// child process with an IPC channel and runs its runs' transforms in it, so DuckDB never loads
// into the process that holds the store (docs/operations.md, "Transforms on the embedded
// store"). It ends when its parent disconnects or is gone.
export function transformHostCommand(program: Command) {
  program
    .command('transform-host', { hidden: true })
    .description('Run transforms for a parent `sluice serve` over its IPC channel (started by serve)')
    .action(async () => {
      if (!process.send)
        throw new CliError(ExitCode.failed, 'transform-host runs only as a child of sluice serve');
      const { serveTransforms } = await import('@sluice/engine');
      // Transforms allocate as a worker does: V8's growth as in a worker (startup.ts).
      startupDone({ embeddedStore: false });
      await serveTransforms();
    });
}
