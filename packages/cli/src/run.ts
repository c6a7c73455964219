// The entry point (bin/sluice.mjs, scripts/build.mjs): parse the command line with the tree of
// main.ts and turn a failure into one stderr line and an exit code (README "Exit codes").
import { describeFailure, ExitCode } from './exit';
import { program } from './main';

// `sluice … | head` closes the pipe early: that is the reader's choice, not a failure.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(ExitCode.ok);
  throw err;
});

try {
  await program.parseAsync(process.argv);
  process.exit(ExitCode.ok);
} catch (err) {
  const { exitCode, message } = describeFailure(err);
  process.stderr.write(`sluice: ${message}\n`);
  process.exit(exitCode);
}
