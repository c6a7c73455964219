import type { Command } from 'commander';
import { printLines } from '../io';
import { configFrom, describeStore, openStoreRuntime } from '../store';

export function migrateCommand(program: Command) {
  program
    .command('migrate')
    .description('Create or upgrade the database schema (and the queue schema), then exit')
    .action(async () => {
      const config = await configFrom();
      // Logs go to stderr: stdout carries only the command's result.
      const rt = await openStoreRuntime(config, { logStream: process.stderr, supervise: false });
      await rt.close();
      printLines([`store migrated: ${describeStore(config)}`]);
    });
}
