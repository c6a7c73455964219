import type { Command } from 'commander';
import { apiClient } from '../api';
import { printJson, printLines } from '../io';
import {
  type CommonOptions,
  call,
  type ListOptions,
  listAndPrint,
  type Page,
  type Row,
  withListOptions,
  withScope,
} from '../resource';

// Change data capture slot safety (docs/cdc.md "Slot safety"): the captures on a data source,
// orphans marked, and dropping an orphan.

const LIST = '/organizations/{organization}/data-sources/{data_source}/captures';
const ITEM = '/organizations/{organization}/data-sources/{data_source}/captures/{capture}';

type SlotOptions = CommonOptions & ListOptions & { dataSource: string };

const mib = (n: unknown) => (typeof n === 'number' ? `${(n / 1024 / 1024).toFixed(1)} MiB` : '-');
const ownerOf = (r: Row) => {
  const o = r.owner as Record<string, string> | null;
  return o ? `${o.project_slug}/${o.pipeline_slug}/${o.step_slug}@${o.environment_slug}` : 'orphan';
};

export function cdcCommand(program: Command) {
  const noun = program
    .command('cdc')
    .description('Change data capture: the captures (replication slots) on data sources');
  const slots = noun
    .command('slots')
    .description('The sluice_ captures on a data source: list (the default) and drop orphans');
  // `sluice cdc slots --data-source x` lists: the list verb is the default subcommand, so the
  // flags belong to each verb and none is required of `slots` itself.
  const list = slots
    .command('list', { isDefault: true })
    .description('List the captures on a data source with their lag; orphans have no deployed owner');
  withListOptions(withScope(list, 'org')).requiredOption('--data-source <slug>', 'data source slug');
  list.action(async (opts: SlotOptions) => {
    const client = await apiClient(opts);
    const fetchPage = async (query: Record<string, unknown>) =>
      (
        await call<Page>(client, 'GET', LIST, {
          path: { organization: opts.org, data_source: opts.dataSource },
          query,
        })
      ).data;
    await listAndPrint(
      fetchPage,
      'captures',
      [
        { header: 'CAPTURE', value: (r) => r.capture_name },
        { header: 'ACTIVE', value: (r) => r.active },
        { header: 'RETAINED', value: (r) => mib(r.lag_bytes) },
        { header: 'CONFIRMED', value: (r) => r.confirmed_position },
        { header: 'WAL_STATUS', value: (r) => r.wal_status },
        { header: 'OWNER', value: ownerOf },
      ],
      opts,
    );
  });

  const drop = slots
    .command('drop <name>')
    .description(
      'Drop an orphan capture (its replication slot and publication); refused while a deployed step owns it',
    );
  withScope(drop, 'org').requiredOption('--data-source <slug>', 'data source slug');
  drop.action(async (name: string, opts: SlotOptions) => {
    const client = await apiClient(opts);
    await call(client, 'DELETE', ITEM, {
      path: { organization: opts.org, data_source: opts.dataSource, capture: name },
    });
    if (opts.json) return printJson({ ok: true });
    printLines([`dropped ${name} from ${opts.dataSource}`]);
  });
}
