import { type Command, InvalidArgumentError } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from '../api';
import { printJson, printTable } from '../io';
import { withStatus } from './pipelines-shared';
import { ONE, oneOf, type TriggerOptions, withTriggerOptions } from './triggers-shared';

const OUTCOMES = [
  'started',
  'buffered',
  'skipped_overlap',
  'skipped_catch_up',
  'skipped_paused',
  'failed',
] as const;
type Outcome = (typeof OUTCOMES)[number];
const outcome = (v: string) => {
  if (!(OUTCOMES as readonly string[]).includes(v))
    throw new InvalidArgumentError(`one of ${OUTCOMES.join(', ')}`);
  return v as Outcome;
};

export function triggersOccurrencesCommand(triggers: Command) {
  withApiOptions(
    withTriggerOptions(
      triggers
        .command('occurrences')
        .description('The ledger of a schedule: every start and every skip with its reason, newest first')
        .argument('<slug>', 'trigger slug')
        .option('--outcome <outcome>', `only this outcome (${OUTCOMES.join(', ')})`, outcome)
        .option('--cursor <cursor>', 'continue from a previous page'),
    ),
  ).action(
    async (slug: string, opts: ApiOptions & TriggerOptions & { outcome?: Outcome; cursor?: string }) => {
      const client = await apiClient(opts);
      const { data } = await withStatus(
        client.GET(`${ONE}/occurrences`, {
          params: {
            path: oneOf(opts, slug),
            query: { limit: 100, outcome: opts.outcome, cursor: opts.cursor },
          },
        }),
      );
      if (opts.json) return printJson(data);
      printTable(data.occurrences, [
        { header: 'NOMINAL', value: (o) => o.nominal_at },
        { header: 'FIRED', value: (o) => o.fire_at },
        { header: 'OUTCOME', value: (o) => o.outcome },
        { header: 'RUN', value: (o) => o.run_slug },
        { header: 'REASON', value: (o) => o.reason },
      ]);
      if (data.has_more) process.stderr.write(`more: --cursor ${data.next_cursor}\n`);
    },
  );
}
