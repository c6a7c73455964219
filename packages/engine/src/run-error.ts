import { TemplateError } from './templates';

// The one error a run ends with. Its message is stored on the run and shown to users, so it is
// always masked (no secret value) before it leaves the executor.

export type RunErrorCode =
  /** A source or sink port threw; `message` names the step and carries the port's message. */
  | 'STEP_FAILED'
  /** The run's signal was aborted (cancel request, run time limit, worker shutdown). */
  | 'CANCELED'
  /** A `{{template}}` of a statement had no value at render time. */
  | 'TEMPLATE_MISSING'
  /** A transform's SQL failed, or its input could not be loaded into DuckDB. */
  | 'TRANSFORM_FAILED'
  /** The plan does not match the spec (a step missing, an edge to nowhere). */
  | 'INVALID_PLAN';

export class RunError extends Error {
  constructor(
    readonly code: RunErrorCode,
    message: string,
    /** The step the error started in, when there is one. */
    readonly step: string | null = null,
    /**
     * Whether running again can help: the step's port error said so (a connector's `retryable`:
     * a refused connection, a timeout, a rate limit). The server retries such a run as a new
     * attempt (docs/runs.md "Retries").
     */
    readonly retryable = false,
  ) {
    super(message);
    this.name = 'RunError';
  }
}

/**
 * Replaces every occurrence of every secret value by `****`, longest first so a secret that
 * contains another is masked whole. Values shorter than 4 characters are masked too: a run
 * input or secret is a secret whatever its length.
 */
export function masker(secretValues: string[]): (text: string) => string {
  const values = [...new Set(secretValues.filter((v) => typeof v === 'string' && v.length > 0))].sort(
    (a, b) => b.length - a.length,
  );
  if (values.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const v of values) out = out.split(v).join('****');
    return out;
  };
}

/**
 * Whether trying the same call again can help: the port's error says so itself (a connector's
 * error carries `retryable` from its code). Anything else is not retried.
 */
export function isRetryable(err: unknown): boolean {
  return (err as { retryable?: unknown } | null)?.retryable === true;
}

/**
 * The errors of a step's failure, masked: the step's own (a port error keeps its code, such
 * as a connector's QUERY_FAILED) and the run's (STEP_FAILED, TEMPLATE_MISSING or the code of
 * a RunError, with a message naming the step).
 */
export function classifyFailure(
  slug: string,
  err: unknown,
  templateError: TemplateError | null,
  mask: (text: string) => string,
): { step: { code: string; message: string }; run: RunError } {
  const tmpl = templateError ?? (err instanceof TemplateError ? err : null);
  let code: string;
  let runCode: RunErrorCode;
  let message: string;
  let retryable = false;
  if (tmpl) {
    code = runCode = 'TEMPLATE_MISSING';
    message = mask(tmpl.message);
  } else if (err instanceof RunError) {
    code = runCode = err.code;
    message = mask(err.message);
  } else {
    const own = (err as { code?: unknown } | null)?.code;
    code = typeof own === 'string' && /^[A-Z][A-Z0-9_]*$/.test(own) ? own : 'STEP_FAILED';
    runCode = 'STEP_FAILED';
    message = mask(err instanceof Error ? err.message : String(err));
    retryable = isRetryable(err);
  }
  // A transform's own errors already name it.
  const prefix = message.startsWith(`transform ${slug}:`) ? '' : `step ${slug}: `;
  return { step: { code, message }, run: new RunError(runCode, `${prefix}${message}`, slug, retryable) };
}
