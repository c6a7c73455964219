import { type Command, InvalidArgumentError } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
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
        printRunTable(page.runs);
        if (page.has_more) process.stderr.write(`more runs: --cursor ${page.next_cursor} (or --all)\n`);
        return;
      }
      all.push(...page.runs);
      if (!page.has_more || !page.next_cursor) break;
      cursor = page.next_cursor;
    }
    if (opts.json) return printJson({ runs: all, has_more: false, next_cursor: null, prev_cursor: null });
    printRunTable(all);
  });
}
