import { ConnectorError, capabilityOf, optionalCapability } from '@sluice/connectors';
import {
  type PipelineSpec,
  type Plan,
  type Ports,
  pipelineSpecSchema,
  planSpec,
  type SinkResult,
  templateRefs,
} from '@sluice/engine';
import type { Deps } from '../context';
import { captureName } from '../modules/cdc/index';
import { withContractChecks } from '../modules/contracts/index';
import { type LoadedConnection, loadConnection } from '../modules/data-sources/index';
import { recordCapturedSchema } from '../modules/drift/index';
import {
  boundDataSources,
  boundFromJson,
  type ClaimedRun,
  type ClaimHints,
  checkpointCursors,
  findRunInput,
  runInputBinding,
  versionSpec,
} from '../modules/runs/index';
import { resolveSecrets } from '../modules/secrets/index';
import { resolveVariables } from '../modules/variables/index';

// Everything a run needs before its first step, read once at the start of an attempt: the spec
// it was queued with, its plan, a connection per source and sink step, secrets, variables, the
// unsealed input and the committed cursors. A problem here fails the run before any I/O.

/** A run that cannot start; `message` is shown on the run, so it names things, never values. */
export class PrepareError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export type PreparedRun = {
  spec: PipelineSpec;
  plan: Plan;
  ports: Ports;
  cursors: Record<string, string | null>;
  scope: Record<string, unknown>;
  secretValues: string[];
  /**
   * What earlier attempts of this run committed, per sink step (from the sinks' own ledgers):
   * a retried run reports those rows even if it is lost again before its sinks run.
   */
  committedWrites(signal: AbortSignal): Promise<Record<string, SinkResult>>;
};

/** Every leaf of a JSON value as text: what must never appear in a log line. */
function leafTexts(value: unknown, out: string[] = []): string[] {
  if (value === null || value === undefined) return out;
  if (Array.isArray(value)) for (const v of value) leafTexts(v, out);
  else if (typeof value === 'object') for (const v of Object.values(value)) leafTexts(v, out);
  else out.push(String(value));
  return out;
}

async function unsealInput(deps: Deps, run: ClaimedRun): Promise<Record<string, unknown>> {
  // Executed without input: nothing was sealed (older runs sealed `{}`).
  if (run.inputKeys.length === 0) return {};
  const row = await findRunInput(deps.db, run.id);
  if (!row) {
    if (run.inputKeys.length === 0) return {};
    throw new PrepareError('INPUT_UNAVAILABLE', 'the input values of this run are no longer available');
  }
  const plain = await deps.keyring.decrypt(deps.db, row, runInputBinding(run.organizationId, row.id));
  return JSON.parse(plain) as Record<string, unknown>;
}

/**
 * Parsed specs and their plans by pipeline and spec hash. A version never changes once stored
 * (its hash is of its content), so a worker reads and plans it once; frozen, so no run can alter
 * what the next one gets. Only valid ones are kept; a deleted version is still found here, as a
 * run queued before the deletion already had it.
 */
type Planned = {
  spec: PipelineSpec;
  plan: Plan;
  /** Whether a template of the spec can reach the environment's secrets / variables. */
  uses: { secrets: boolean; env: boolean };
};
const planCache = new Map<string, Planned>();

/** `{{runtime}}`, `{{runtime.secrets}}` and `{{runtime.secrets.X}}` all reach the secrets. */
export function usesOf(spec: PipelineSpec): Planned['uses'] {
  const names = templateRefs(spec).map((r) => r.name);
  const reaches = (ns: string) =>
    names.some((n) => n === 'runtime' || n === `runtime.${ns}` || n.startsWith(`runtime.${ns}.`));
  return { secrets: reaches('secrets'), env: reaches('env') };
}
const PLAN_CACHE_SIZE = 200;

/**
 * The step order of the plans this worker planned last (at most `limit`), by
 * `pipelineId:specHash`: the fetch that claims a run of one of them resets its steps too.
 */
export function knownPlanOrders(limit = 20): Record<string, string[]> {
  const entries = [...planCache].slice(-limit);
  return Object.fromEntries(entries.map(([key, p]) => [key, p.plan.order]));
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** A stored spec parsed and planned, kept under `key`; a spec that no longer plans throws. */
function planStored(key: string, stored: unknown): Planned {
  const parsed = pipelineSpecSchema.safeParse(stored);
  if (!parsed.success) throw new PrepareError('INVALID_SPEC', 'the stored spec no longer parses');
  const spec = parsed.data;
  const { plan, findings } = planSpec(spec);
  if (!plan) {
    const first = findings.find((f) => f.severity === 'error');
    throw new PrepareError(
      'INVALID_SPEC',
      first ? `${first.path}: ${first.message}` : 'the spec has no plan',
    );
  }
  const entry = deepFreeze({ spec, plan, uses: usesOf(spec) });
  planCache.delete(key);
  if (planCache.size >= PLAN_CACHE_SIZE) planCache.delete(planCache.keys().next().value!);
  planCache.set(key, entry);
  return entry;
}

async function specAndPlan(deps: Deps, run: ClaimedRun): Promise<Planned> {
  const key = `${run.pipelineId}:${run.specHash}`;
  const cached = planCache.get(key);
  if (cached) return cached;
  const stored = await versionSpec(deps.db, run.pipelineId, run.specHash);
  if (!stored) throw new PrepareError('SPEC_NOT_FOUND', `pipeline version ${run.specHash} no longer exists`);
  return planStored(key, stored);
}

/** How many deployed specs a worker's warm start plans at most: as many as it keeps. */
export const WARM_PLANS = PLAN_CACHE_SIZE;

/**
 * Plans stored specs before any run needs them (a worker's warm start, with the active
 * deployments' specs, the most recent last): a first run of one of them then neither reads its
 * spec nor parses and plans it, and the fetch that claims it resets its steps too
 * (knownPlanOrders). A spec that no longer plans is skipped: its run fails with its own error.
 * Returns how many were planned.
 */
export function planAhead(specs: { pipelineId: string; specHash: string; spec: unknown }[]): number {
  let planned = 0;
  for (const { pipelineId, specHash, spec } of specs.slice(-WARM_PLANS)) {
    try {
      planStored(`${pipelineId}:${specHash}`, spec);
      planned++;
    } catch (err) {
      if (!(err instanceof PrepareError)) throw err;
    }
  }
  return planned;
}

export async function prepareRun(deps: Deps, run: ClaimedRun & ClaimHints): Promise<PreparedRun> {
  const { spec, plan, uses } = await specAndPlan(deps, run);

  // Read with the claim when it also reset the steps; else the attempt's steps are reset
  // (pending, in plan order) by the statement that reads them.
  const bound =
    run.bound !== undefined && run.stepsReset
      ? boundFromJson(run.bound)
      : await boundDataSources(deps.db, run.pipelineId, run.environmentId, {
          runId: run.id,
          order: plan.order,
        });
  const connections = new Map<string, LoadedConnection>();
  // A data source read by one step and written by another (or used twice) is loaded once.
  const loaded = new Map<string, LoadedConnection>();
  for (const step of spec.steps) {
    if (step.kind === 'transform' || !step.data_source_ref) continue;
    const row = bound.get(step.data_source_ref);
    if (!row) {
      throw new PrepareError(
        'DATA_SOURCE_NOT_BOUND',
        `data source ref ${step.data_source_ref} of step ${step.slug} is not bound in this environment`,
      );
    }
    if (!row.isActive) {
      throw new PrepareError(
        'DATA_SOURCE_INACTIVE',
        `data source ${row.slug} of step ${step.slug} is inactive`,
      );
    }
    if (step.kind === 'sink' && row.readOnly) {
      throw new PrepareError(
        'DATA_SOURCE_READ_ONLY',
        `data source ${row.slug} of sink ${step.slug} is read-only`,
      );
    }
    try {
      const connection =
        loaded.get(row.id) ?? (await loadConnection(deps.db, deps, row, row.currentCredential));
      loaded.set(row.id, connection);
      connections.set(step.slug, connection);
    } catch {
      throw new PrepareError(
        'CREDENTIALS_UNREADABLE',
        `the credentials of data source ${row.slug} could not be read; set them again`,
      );
    }
  }

  // A sink's session opens now, beside the reads below and the source's open, instead of after
  // the source's first rows (docs/scaling.md#round-trips-to-the-data-servers).
  if (deps.sessions) {
    for (const step of spec.steps) {
      const c = step.kind === 'sink' ? connections.get(step.slug) : undefined;
      if (!c) continue;
      optionalCapability(c.definition, 'sessions')?.warm(
        c.connection,
        { ...c.ctx, sessions: deps.sessions },
        { readOnly: false },
      );
    }
  }

  // Secrets and variables no template can reach are not read (nor decrypted).
  const [secrets, variables, input, cursors] = await Promise.all([
    uses.secrets
      ? resolveSecrets(deps.db, deps.keyring, run.organizationId, run.environmentId)
      : ({} as Record<string, string>),
    uses.env ? resolveVariables(deps.db, run.organizationId, run.environmentId) : {},
    unsealInput(deps, run),
    run.hasCheckpoints === false ? {} : checkpointCursors(deps.db, run.pipelineId, run.environmentId),
  ]).catch((err) => {
    if (err instanceof PrepareError) throw err;
    throw new PrepareError('SECRETS_UNREADABLE', 'environment secrets or run input could not be decrypted');
  });

  const connectionOf = (slug: string) => {
    const c = connections.get(slug);
    if (!c) throw new ConnectorError('UNSUPPORTED_OPERATION', `step ${slug} has no data source`);
    return c;
  };
  // A sink step writes once per upstream input, in plan order: the n-th write of a step has the
  // same key on every attempt, so a retry finds what the dead attempt already committed.
  const writes = new Map<string, number>();
  const commitKeyOf = (slug: string) => {
    const n = writes.get(slug) ?? 0;
    writes.set(slug, n + 1);
    return `${run.id}:${slug}:${n}`;
  };
  const ports: Ports = {
    async readSource(ctx) {
      const c = connectionOf(ctx.step.slug);
      const connectorCtx = { ...c.ctx, signal: ctx.signal, sessions: deps.sessions };
      if (ctx.step.operation.operation_type === 'cdc') {
        // Change data capture (docs/cdc.md): one capture per pipeline source step and
        // environment; a later attempt repeats what a lost one handed on.
        const capture = captureName(run.pipelineId, run.environmentId, ctx.step.slug);
        const dataSourceId = bound.get(ctx.step.data_source_ref!)!.id;
        return capabilityOf(c.definition, 'changes').read(c.connection, ctx, capture, {
          ...connectorCtx,
          attempt: run.attempt,
          // Schema changes become drift reports; a broken contract stops the read (docs/cdc.md).
          onCapturedSchema: (tables) =>
            recordCapturedSchema(
              deps,
              {
                dataSourceId,
                pipelineId: run.pipelineId,
                environmentId: run.environmentId,
                specHash: run.specHash,
                spec,
              },
              tables,
            ),
        });
      }
      return capabilityOf(c.definition, 'source').read(c.connection, ctx, connectorCtx);
    },
    async writeSink(payload, ctx) {
      const c = connectionOf(ctx.step.slug);
      return capabilityOf(c.definition, 'sink').write(c.connection, payload, ctx, {
        ...c.ctx,
        signal: ctx.signal,
        sessions: deps.sessions,
        commitKey: commitKeyOf(ctx.step.slug),
      });
    },
  };

  const committedWrites = async (signal: AbortSignal) => {
    const found: Record<string, SinkResult> = {};
    for (const step of spec.steps) {
      const c = connections.get(step.slug);
      // A sink without a ledger cannot tell what a lost attempt committed.
      const ledger = step.kind === 'sink' && c ? optionalCapability(c.definition, 'ledger') : null;
      if (!c || !ledger) continue;
      const r = await ledger.committedWrites(c.connection, step, `${run.id}:${step.slug}:`, {
        ...c.ctx,
        signal,
        sessions: deps.sessions,
      });
      if (r) found[step.slug] = r;
    }
    return found;
  };

  return {
    spec,
    plan,
    committedWrites,
    ports: await withContractChecks(deps.db, run, ports),
    cursors,
    scope: {
      runtime: {
        // A declared optional input that was not given renders as null rather than failing.
        input: { ...Object.fromEntries(Object.keys(spec.inputs).map((k) => [k, null])), ...input },
        env: variables,
        secrets,
        run_slug: run.slug,
      },
    },
    secretValues: [...Object.values(secrets), ...leafTexts(input)],
  };
}
