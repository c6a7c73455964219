import type { Counters } from './payloads';
import type { LogLevel, StepContext } from './ports';
import type { Step } from './spec';
import { type Resolve, renderValue, scopeResolver, TemplateError } from './templates';

// What a port sees of the run for one step: its statement renderer, a masked logger and its
// counters. Secrets enter values only here, at the moment of the outbound call.

export const TEMPLATE = /\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}/g;

/** The resolver of a step: the run's scope plus the step's cursor; `{{input}}` stays as it is. */
export function stepResolver(
  scope: Record<string, unknown>,
  runSlug: string,
  lowerBoundCursor: string | null,
): Resolve {
  const inScope = scopeResolver(scope);
  return (name) => {
    if (name === 'input') return { found: true, value: '{{input}}' };
    if (name === 'runtime.incremental.lower_bound.cursor') return { found: true, value: lowerBoundCursor };
    const r = inScope(name);
    if (!r.found && name === 'runtime.run_slug') return { found: true, value: runSlug };
    return r;
  };
}

export type StepTally = {
  counters: Counters;
  /** Counters changed since the last progress report. */
  dirty: boolean;
  /** Set when a template had no value: the step's failure is then TEMPLATE_MISSING. */
  templateError: TemplateError | null;
};

export function newStepTally(): StepTally {
  return {
    counters: { rows_in: 0, rows_out: 0, bytes_in: 0, bytes_out: 0 },
    dirty: false,
    templateError: null,
  };
}

export function stepContext(o: {
  runSlug: string;
  step: Step;
  signal: AbortSignal;
  scope: Record<string, unknown>;
  lowerBoundCursor: string | null;
  state: StepTally;
  log(level: LogLevel, message: string): void;
}): StepContext {
  const resolve = stepResolver(o.scope, o.runSlug, o.lowerBoundCursor);
  return {
    runSlug: o.runSlug,
    step: o.step,
    signal: o.signal,
    lowerBoundCursor: o.lowerBoundCursor,
    render(value) {
      try {
        return renderValue(value, resolve);
      } catch (err) {
        if (err instanceof TemplateError) o.state.templateError ??= err;
        throw err;
      }
    },
    log: o.log,
    count(delta) {
      const c = o.state.counters;
      c.rows_in += delta.rows_in ?? 0;
      c.rows_out += delta.rows_out ?? 0;
      c.bytes_in += delta.bytes_in ?? 0;
      c.bytes_out += delta.bytes_out ?? 0;
      o.state.dirty = true;
    },
  };
}

/**
 * Turns the templates of a transform's SQL into bound parameters (`$t1`, `$t2`, …) with their
 * values, so no value is ever spliced into SQL text. Throws TemplateError for a missing one.
 */
export function bindTemplates(
  sql: string,
  resolve: Resolve,
): { sql: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = {};
  const byName = new Map<string, string>();
  const out = sql.replace(TEMPLATE, (_m, name: string) => {
    let param = byName.get(name);
    if (!param) {
      const r = resolve(name);
      if (!r.found || name === 'input') throw new TemplateError(name);
      param = `t${byName.size + 1}`;
      byName.set(name, param);
      params[param] = r.value;
    }
    return `$${param}`;
  });
  return { sql: out, params };
}
