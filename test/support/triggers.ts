import { tick } from '../../packages/server/src/modules/triggers/trigger-tick';
import type { TestApp } from './app';
import { type Call, deployOrdersPipeline, ordersSpec } from './runs';

// Trigger suites: a deployed pipeline (no worker, so runs stay queued: "long-running"), and
// the tick driven by an injected clock.

export const PE = '/organizations/acme/projects/shop/environments/staging';

export async function setupTriggerPipelines(t: TestApp) {
  const owner = (await t.bootstrap('acme')).api_key;
  const call: Call = (m, u, b) => t.call(m, u, { token: owner, body: b });
  // Nothing connects during these suites: runs are queued, never executed.
  await deployOrdersPipeline(call, {
    apiUrl: 'http://127.0.0.1:9',
    sinkDatabase: 'unused',
    pipeline: 'nightly',
    spec: ordersSpec({ inputs: false }),
  });
  await deployOrdersPipeline(call, {
    apiUrl: 'http://127.0.0.1:9',
    sinkDatabase: 'unused',
    pipeline: 'hooked',
    spec: ordersSpec(),
    firstTime: false,
  });
  return { owner, call };
}

export const at = (iso: string) => () => new Date(iso);

export function tickAt(t: TestApp, iso: string) {
  return tick(t.rt.deps, { clock: at(iso) });
}

/** Places a schedule's cursor as if it had been created (or last decided) at `iso`. */
export async function rewindCursor(t: Pick<TestApp, 'rt'>, slug: string, iso: string) {
  await t.rt.deps.store.executeSql(
    'update pipeline_triggers set cursor_nominal_at = $2, next_fire_at = $2 where slug = $1',
    [slug, iso],
  );
}

export async function rows(t: TestApp, text: string, values: unknown[] = []): Promise<any[]> {
  return (await t.rt.deps.store.executeSql(text, values)).rows;
}
