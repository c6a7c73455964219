import { rm } from 'node:fs/promises';
import { connectorFor, dataSourceTypes, optionalCapability, readServedJson } from '@sluice/connectors';
import { exerciseTransforms, loadTransforms } from '@sluice/engine';
import type { Deps } from '../context';
import { deployedRunPath, deployedSpecs } from '../modules/pipelines/index';
import { planAhead, WARM_PLANS } from './run-prepare';
import { makeRunTmpDir, runPipeDir } from './run-tmp';

// A worker's warm start (docs/operations.md#a-workers-warm-start): before it takes its first
// job, it loads the code the deployed pipelines' runs will need (their connectors' source and
// sink modules with their drivers, DuckDB when a pipeline has a transform), which each would
// otherwise load on its first call, inside a run. With a transform deployed, it then runs one
// transform on made-up records in a run directory of its own (transform-exercise.ts in the
// engine), so a first run does not pay for DuckDB's and the records' path's first use; with an
// HTTP data source deployed too, its records come through the HTTP source from a server of the
// worker's own on 127.0.0.1 (http/exercise.ts in the connectors), as a JSON API's do. Nothing
// else connects; a load or an exercise that fails is only logged: the run that needs the code
// loads it again and reports its own error. It also parses and plans the active deployments'
// specs (run-prepare.ts planAhead), as their first runs would.

export type WarmStart = {
  types: string[];
  transforms: boolean;
  /** Rows of the transform exercised (null: none was). */
  exercised: number | null;
  /** The source kind the exercise's records came through (null: none, or as they are). */
  exercisedThrough: 'http' | null;
  /** Deployed specs parsed and planned ahead of their first runs. */
  planned: number;
  failed: string[];
  ms: number;
};

async function exercise(http: boolean): Promise<number> {
  const dir = await makeRunTmpDir();
  try {
    return await exerciseTransforms({ dir, pipeDir: runPipeDir(), input: http ? readServedJson : undefined });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function warmStart(deps: Deps): Promise<WarmStart> {
  const started = performance.now();
  // A warm start that cannot read the deployments loads nothing: the worker starts all the same.
  const path = await deployedRunPath(deps.db).catch((err: unknown) => {
    deps.log.warn(
      { err: err instanceof Error ? err.message : String(err) },
      'warm start: could not read the deployed pipelines; nothing loaded',
    );
    return { types: [] as string[], transforms: false };
  });
  const known = new Set<string>(dataSourceTypes);
  const types = path.types.filter((t) => known.has(t));
  const loads: { what: string; load: () => Promise<void> }[] = [];
  for (const type of types) {
    const def = connectorFor(type);
    for (const role of ['source', 'sink'] as const) {
      const capability = optionalCapability(def, role);
      if (capability) loads.push({ what: `${type} ${role}`, load: () => capability.load() });
    }
  }
  if (path.transforms) loads.push({ what: 'transforms', load: loadTransforms });
  const failed: string[] = [];
  let exercised: number | null = null;
  let exercisedThrough: WarmStart['exercisedThrough'] = null;
  // One after another: each load is mostly synchronous module evaluation on this thread.
  for (const { what, load } of loads) {
    try {
      await load();
    } catch (err) {
      failed.push(what);
      deps.log.warn(
        { what, err: err instanceof Error ? err.message : String(err) },
        'warm start: could not load the code a deployed pipeline needs',
      );
    }
  }
  if (path.transforms && !failed.includes('transforms')) {
    try {
      const http = types.includes('http') && !failed.includes('http source');
      exercised = await exercise(http);
      if (http) exercisedThrough = 'http';
    } catch (err) {
      failed.push('transform exercise');
      deps.log.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'warm start: the transform exercise failed',
      );
    }
  }
  const planned = await deployedSpecs(deps.db, WARM_PLANS)
    .then(planAhead)
    .catch((err: unknown) => {
      deps.log.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'warm start: could not plan the deployed specs',
      );
      return 0;
    });
  const result = {
    types,
    transforms: path.transforms,
    exercised,
    exercisedThrough,
    planned,
    failed,
    ms: Math.round(performance.now() - started),
  };
  deps.log.info(result, 'warm start: loaded the code of the deployed pipelines');
  return result;
}
