import type { SluiceClient } from '@sluice/client';
import { type Command, InvalidArgumentError } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { orNull } from '../apply/compare';
import { printJson } from '../io';
import { type EnvOptions, peOf, type Run, withEnvOptions, withStatus } from './pipelines-shared';
import { printRunTable } from './runs-format';

const STATES = ['queued', 'running', 'canceling', 'succeeded', 'failed', 'canceled'] as const;
type State = (typeof STATES)[number];

type ListOptions = ApiOptions &
  EnvOptions & { pipeline?: string; state?: State; limit: number; cursor?: string; all?: boolean };

function pageSize(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new InvalidArgumentError('an integer from 1 to 100');
  return n;
}

function state(value: string): State {
  if (!(STATES as readonly string[]).includes(value))
    throw new InvalidArgumentError(`one of ${STATES.join(', ')}`);
  return value as State;
}

/**
 * The sink steps of every version the runs ran, one read per version: a run's step progress does
 * not say which steps are sinks, its spec does.
 */
async function sinkStepsOf(client: SluiceClient, opts: EnvOptions, runs: Run[]) {
  const sinks = new Map<string, Set<string> | null>();
  for (const run of runs) {
    const key = `${run.pipeline_slug}@${run.spec_hash}`;
    if (sinks.has(key)) continue;
    // A version that cannot be read (its pipeline was deleted) leaves the column empty.
    const read = await orNull(
      withStatus(
        client.GET(
          '/organizations/{organization}/projects/{project}/pipelines/{pipeline}/versions/{spec_hash}',
          {
            params: {
              path: {
                organization: opts.org,
                project: opts.project,
                pipeline: run.pipeline_slug,
                spec_hash: run.spec_hash,
              },
            },
          },
        ),
      ),
    );
    const steps = (read?.data.spec as { steps?: { slug: string; kind: string }[] } | undefined)?.steps;
    sinks.set(key, steps ? new Set(steps.filter((s) => s.kind === 'sink').map((s) => s.slug)) : null);
  }
  return (run: Run) => sinks.get(`${run.pipeline_slug}@${run.spec_hash}`) ?? null;
}

export function runsListCommand(runs: Command) {
  withApiOptions(
    withEnvOptions(
      runs
        .command('list')
        .description('List the runs of an environment, newest first')
        .option('--pipeline <slug>', 'only the runs of this pipeline')
        .option('--state <state>', `only runs in this state (${STATES.join(', ')})`, state)
        .option('--limit <n>', 'page size, 1 to 100', pageSize, 20)
        .option('--cursor <cursor>', 'continue from a previous page (its next_cursor)')
        .option('--all', 'follow next_cursor until every run is listed'),
    ),
  ).action(async (opts: ListOptions) => {
    const client = await apiClient(opts);
    const all: Run[] = [];
    let cursor = opts.cursor;
    for (;;) {
      const { data: page } = await withStatus(
        client.GET('/organizations/{organization}/projects/{project}/environments/{environment}/runs', {
          params: {
            path: peOf(opts),
            query: { limit: opts.limit, cursor, pipeline_slug: opts.pipeline, state: opts.state },
          },
        }),
      );
      if (!opts.all) {
        if (opts.json) return printJson(page);
        printRunTable(page.runs, await sinkStepsOf(client, opts, page.runs));
        if (page.has_more) process.stderr.write(`more runs: --cursor ${page.next_cursor} (or --all)\n`);
        return;
      }
      all.push(...page.runs);
      if (!page.has_more || !page.next_cursor) break;
      cursor = page.next_cursor;
    }
    if (opts.json) return printJson({ runs: all, has_more: false, next_cursor: null, prev_cursor: null });
    printRunTable(all, await sinkStepsOf(client, opts, all));
  });
}
