import { ExitCode } from './exit';

/**
 * Resolves once SIGINT or SIGTERM has been handled: `close` runs (stop taking work, let what is
 * in flight finish, close the store) and its failure is not the caller's to handle. A second
 * signal exits at once; a close that takes longer than `graceMs` exits too, both with
 * `ExitCode.failed`.
 */
export function untilStopped(opts: {
  log: { info(obj: object, msg: string): void };
  message: string;
  graceMs: number;
  close: () => Promise<unknown>;
}): Promise<void> {
  return new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        process.stderr.write(`sluice: ${signal} again, exiting now\n`);
        process.exit(ExitCode.failed);
      }
      stopping = true;
      opts.log.info({ signal }, opts.message);
      setTimeout(() => {
        process.stderr.write('sluice: shutdown took too long, exiting\n');
        process.exit(ExitCode.failed);
      }, opts.graceMs).unref();
      opts
        .close()
        .catch(() => {})
        .then(() => resolve());
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
