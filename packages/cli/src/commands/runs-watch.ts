import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { type EnvOptions, withEnvOptions } from './pipelines-shared';
import { displayModeOf, exitForRun, followRun, intervalMs } from './runs-follow';

type WatchOptions = ApiOptions & EnvOptions & { interval?: string };

export function runsWatchCommand(runs: Command) {
  withApiOptions(
    withEnvOptions(
      runs
        .command('watch')
        .description(
          'Follow a run until it ends: per-step progress and new log lines; exit 0 when it succeeds, 1 when it fails or is canceled',
        )
        .argument('<run_slug>', 'slug of the run')
        .option('--interval <seconds>', 'seconds between polls (default 1)'),
    ),
  ).action(async (runSlug: string, opts: WatchOptions) => {
    const interval = intervalMs(opts.interval);
    const client = await apiClient(opts);
    const run = await followRun(client, {
      ...opts,
      runSlug,
      mode: displayModeOf(opts.json, process.stdout),
      intervalMs: interval,
      out: process.stdout,
    });
    exitForRun(run);
  });
}
