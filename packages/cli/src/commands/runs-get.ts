import type { Command } from 'commander';
import { apiClient } from '../api';
import { printLines } from '../io';
import { action, type CommonOptions, call, followLoop, withScope } from '../resource';
import type { EnvOptions, Run } from './pipelines-shared';
import { intervalMs, logFollower } from './runs-follow';
import { isTerminal, logLine } from './runs-format';

const RUN = '/organizations/{organization}/projects/{project}/environments/{environment}/runs/{run_slug}';

export function runsGetCommands(runs: Command) {
  action(runs, 'env', {
    name: 'get',
    args: ['<run>'],
    description: 'Show a run with its steps',
    method: 'GET',
    path: RUN,
  });
  withScope(
    runs.command('logs <run>').description('Print the log lines of a run; --follow until it ends'),
    'env',
  )
    .option('--follow', 'keep printing new lines until the run is succeeded, failed or canceled')
    .option('--interval <seconds>', 'with --follow: seconds between polls (default 1)')
    .action(async (runSlug: string, opts: CommonOptions & { follow?: boolean; interval?: string }) => {
      const interval = intervalMs(opts.interval);
      const client = await apiClient(opts);
      const env = opts as unknown as EnvOptions;
      const path = { organization: env.org, project: env.project, environment: env.env, run_slug: runSlug };
      const newLogs = logFollower(client, path);
      await followLoop(async () => {
        // The run first: once it is terminal, the lines read after it are all there are.
        const done = opts.follow ? isTerminal((await call<Run>(client, 'GET', RUN, { path })).data) : true;
        const lines = await newLogs();
        if (lines.length) printLines(lines.map((l) => (opts.json ? JSON.stringify(l) : logLine(l))));
        return done;
      }, interval);
    });
}
