import type { Command } from 'commander';
import { apiClient } from '../api';
import { printLines } from '../io';
import {
  type CommonOptions,
  call,
  cols,
  followLoop,
  type ListOptions,
  listAndPrint,
  type Page,
  type Row,
  tableCell,
  withListOptions,
  withScope,
} from '../resource';
import { intervalMs } from './runs-follow';

const FILTERS = [
  ['action', 'action', 'event action, e.g. create'],
  ['actor', 'actor_slug', 'actor slug'],
  ['actor-type', 'actor_type', 'user, api_key, system, external or unknown'],
  ['entity', 'entity_slug', 'entity slug'],
  ['entity-type', 'entity_type', 'entity type, e.g. data_source'],
  ['from', 'occurred_from', 'at or after this date-time'],
  ['before', 'occurred_before', 'strictly before this date-time'],
  ['request-id', 'request_id', 'the request that caused it'],
] as const;

const columns = cols(
  'occurred_at',
  'actor_type',
  'actor_slug',
  'action',
  'entity_type',
  'entity_slug',
  'request_id',
);

type EventsOptions = CommonOptions & ListOptions & { follow?: boolean; interval?: string };

function eventsList(
  program: Command,
  name: string,
  path: '/organizations/{organization}/events' | '/organizations/{organization}/security-audit-events',
  what: string,
) {
  // `<noun> list` like every other list; the bare noun still lists (its default command).
  const group = program.command(name).description(what);
  const cmd = withListOptions(withScope(group.command('list', { isDefault: true }).description(what), 'org'));
  for (const [flag, , description] of FILTERS) cmd.option(`--${flag} <value>`, description);
  cmd
    .option('--follow', 'keep printing new events as they happen (oldest first), until interrupted')
    .option('--interval <seconds>', 'with --follow: seconds between polls (default 1)');
  cmd.action(async (opts: EventsOptions) => {
    const client = await apiClient(opts);
    const filters: Record<string, unknown> = {};
    for (const [flag, query] of FILTERS) {
      const v = opts[flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())];
      if (v !== undefined) filters[query] = v;
    }
    const page = async (query: Record<string, unknown>) =>
      (
        await call<Page>(client, 'GET', path, {
          path: { organization: opts.org },
          query: { ...query, ...filters },
        })
      ).data;
    if (!opts.follow) return listAndPrint(page, 'events', columns, opts);
    // Following moves occurred_from forward itself; --from is only where it starts.
    delete filters.occurred_from;
    await followEvents(page, opts);
  });
}

/**
 * New events in order: each poll reads ascending from the newest time seen and skips the
 * slugs already printed at that instant (events sharing a timestamp).
 */
async function followEvents(page: (q: Record<string, unknown>) => Promise<Page>, opts: EventsOptions) {
  const interval = intervalMs(opts.interval);
  let from = opts.from ?? new Date().toISOString();
  let seenAtFrom = new Set<string>();
  process.stderr.write(`following events from ${from} (Ctrl-C to stop)\n`);
  await followLoop(async () => {
    let cursor: string | undefined;
    for (;;) {
      const p = await page({ limit: 100, order: 'asc', occurred_from: from, ...(cursor ? { cursor } : {}) });
      const fresh = ((p.events as Row[]) ?? []).filter(
        (e) => !(e.occurred_at === from && seenAtFrom.has(String(e.slug))),
      );
      for (const e of fresh) {
        if (e.occurred_at !== from) {
          from = String(e.occurred_at);
          seenAtFrom = new Set();
        }
        seenAtFrom.add(String(e.slug));
      }
      if (fresh.length > 0) {
        const line = (e: Row) =>
          opts.json ? JSON.stringify(e) : columns.map((c) => tableCell(c.value(e))).join('  ');
        printLines(fresh.map(line));
      }
      if (!p.has_more || !p.next_cursor) return false;
      cursor = p.next_cursor;
    }
  }, interval);
}

export function eventsCommand(program: Command) {
  eventsList(
    program,
    'events',
    '/organizations/{organization}/events',
    'List (or --follow) the activity events of an organization',
  );
  eventsList(
    program,
    'security-events',
    '/organizations/{organization}/security-audit-events',
    'List (or --follow) the security-audit events of an organization',
  );
}
