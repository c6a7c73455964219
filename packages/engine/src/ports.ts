import type { Counters, Payload, SinkResult, SourceOutput } from './payloads';
import type { Step } from './spec';

// The executor's view of the world. The worker implements these ports with connectors and the
// database; tests implement them with real local servers. The engine itself does no I/O but
// DuckDB in transforms.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export type StepContext = {
  runSlug: string;
  step: Step;
  signal: AbortSignal;
  /**
   * Renders templates of a statement value at the moment of the outbound call, secrets
   * included. What it returns must never be logged or stored. `{{input}}` is left as it is
   * (a sink puts its payload there itself); a template without a value throws TemplateError,
   * which fails the step with TEMPLATE_MISSING even when the port wraps it.
   */
  render(value: unknown): unknown;
  /** `{{runtime.incremental.lower_bound.cursor}}` of this step: the last committed cursor. */
  lowerBoundCursor: string | null;
  /** Masks every secret value before the line is kept. */
  log(level: LogLevel, message: string): void;
  /**
   * Adds to the step's counters. The executor already counts the payloads it hands over (a
   * source's rows_out/bytes_out, a sink's rows_in/bytes_in); ports count the remote side (a
   * source's bytes_in; a sink's progress, replaced by its SinkResult when the write resolves).
   */
  count(delta: Partial<Counters>): void;
};

export type Ports = {
  readSource(ctx: StepContext): Promise<SourceOutput>;
  writeSink(input: Payload, ctx: StepContext): Promise<SinkResult>;
};

export type StepState = 'pending' | 'running' | 'succeeded' | 'failed' | 'canceled' | 'skipped';

export type StepReport = {
  step: string;
  state: StepState;
  counters: Counters;
  error?: { code: string; message: string };
};

export type RunObserver = {
  onStep(report: StepReport): void | Promise<void>;
};
