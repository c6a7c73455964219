// bench:history's paths (history.bench.ts): the list and log-tail requests measured on both
// stores, each with the URL it asks on either store and what its answer must hold.
import type { Store } from './history-store';
import { PE } from './pipeline-support';

export type Path = {
  label: string;
  url(store: 'empty' | 'seeded', i: number): string;
  expect(body: any): void;
};

const nonEmpty = (key: string) => (b: any) => {
  if (!Array.isArray(b[key]) || b[key].length === 0) throw new Error(`no ${key} in ${JSON.stringify(b)}`);
};

export type PathOptions = {
  /** Runs executed one at a time per store: the empty store's runs to list and tail. */
  executes: number;
  /** Seeded runs and events, and which of them are drawn. */
  runs: number;
  events: number;
  draw: number;
  /** The slug of this invocation's i-th executed (`x`) or failed (`f`) run. */
  mine(kind: 'x' | 'f', i: number): string;
};

/** The paths, once both stores hold their runs (second pages start from each store's own cursor). */
export async function historyPaths(empty: Store, seeded: Store, o: PathOptions): Promise<Path[]> {
  const cursorOf = async (s: Store, url: string) => (await s.p.call('GET', url)).next_cursor as string;
  const runsPage2 = {
    empty: await cursorOf(empty, `${PE}/runs?limit=2`),
    seeded: await cursorOf(seeded, `${PE}/runs?limit=2`),
  };
  const eventsPage2 = {
    empty: await cursorOf(empty, '/organizations/acme/events?limit=2'),
    seeded: await cursorOf(seeded, '/organizations/acme/events?limit=2'),
  };
  // Second pages start after the first two items (the empty store has few).
  // The empty store's events are about its executed runs; the seeded store's about `h…` runs.
  const someRun = (store: 'empty' | 'seeded', i: number) =>
    store === 'empty'
      ? o.mine('x', (i * 7919) % Math.max(1, o.executes))
      : `h${1 + (((i + o.draw) * 7_919_993) % o.runs)}`;
  // Event i is about run `h<i>` and occurred (events - i) / events of the 27 days ago: entities
  // drawn over all the events (not only the runs seeded, fewer than the events at a reduced
  // size), so about a quarter of them have their event in the last week, as at the full size.
  const someEntity = (store: 'empty' | 'seeded', i: number) =>
    store === 'empty' ? someRun(store, i) : `h${1 + (((i + o.draw) * 7_919_993) % o.events)}`;
  return [
    {
      label: 'events list, first page',
      url: () => '/organizations/acme/events?limit=20',
      expect: nonEmpty('events'),
    },
    {
      label: 'events list, second page',
      url: (s) => `/organizations/acme/events?limit=20&cursor=${eventsPage2[s]}`,
      expect: nonEmpty('events'),
    },
    {
      label: 'events list, entity_slug filter',
      url: (s, i) => `/organizations/acme/events?limit=20&entity_slug=${someEntity(s, i)}`,
      expect: () => {},
    },
    {
      label: 'security-audit events list',
      url: () => '/organizations/acme/security-audit-events?limit=20',
      expect: () => {},
    },
    { label: 'runs list, first page', url: () => `${PE}/runs?limit=20`, expect: nonEmpty('runs') },
    {
      label: 'runs list, second page',
      url: (s) => `${PE}/runs?limit=20&cursor=${runsPage2[s]}`,
      expect: nonEmpty('runs'),
    },
    {
      label: 'runs list, state=failed',
      url: () => `${PE}/runs?limit=20&state=failed`,
      expect: nonEmpty('runs'),
    },
    {
      label: 'runs list, pipeline_slug=tick',
      url: () => `${PE}/runs?limit=20&pipeline_slug=tick`,
      expect: nonEmpty('runs'),
    },
    {
      label: 'runs list, trigger=api',
      url: () => `${PE}/runs?limit=20&trigger=api`,
      expect: nonEmpty('runs'),
    },
    {
      // A random run of the last 180 days on the seeded store (its pages rarely in memory: the
      // store is larger than this machine's), one this invocation ran on the empty one.
      label: "a run's log tail (last 20 lines)",
      url: (s, i) => `${PE}/runs/${someRun(s, i)}/logs?limit=20`,
      expect: nonEmpty('logs'),
    },
    {
      // The same runs on both stores: the ones this invocation ran on each, as recent on both
      // (what the console's live tail reads); the seeded store has its history beside them.
      label: 'log tail, the same recent runs',
      url: (_s, i) => `${PE}/runs/${o.mine('x', (i * 7919) % Math.max(1, o.executes))}/logs?limit=20`,
      expect: nonEmpty('logs'),
    },
  ];
}
