import type { Command } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson, printLines } from '../io';
import { type EnvOptions, peOf, withEnvOptions, withStatus } from './pipelines-shared';

type CancelOptions = ApiOptions & EnvOptions;

export function runsCancelCommand(runs: Command) {
  withApiOptions(
    withEnvOptions(
      runs
        .command('cancel')
        .description(
          'Cancel a run: a queued run ends at once, a running one becomes canceling and stops within seconds',
        )
        .argument('<run_slug>', 'slug of the run'),
    ),
  ).action(async (runSlug: string, opts: CancelOptions) => {
    const client = await apiClient(opts);
    const { data: run } = await withStatus(
      client.POST(
        '/organizations/{organization}/projects/{project}/environments/{environment}/runs/{run_slug}:cancel',
        {
          params: { path: { ...peOf(opts), run_slug: runSlug } },
        },
      ),
    );
    if (opts.json) return printJson(run);
    printLines([
      run.state === 'canceling'
        ? `run ${run.slug} canceling: its worker stops it within seconds (sluice runs watch … ${run.slug})`
        : `run ${run.slug} ${run.state}`,
    ]);
  });
}
