import { ApiError, ConnectionError } from '@sluice/client';

/** Exit codes are part of the CLI's contract (README "Exit codes"); scripts branch on them. */
export const ExitCode = {
  ok: 0,
  /** The API answered with an error, or the command line or configuration is wrong. */
  failed: 1,
  /** The store refused the operation (bootstrap on a store that already has an organization). */
  refused: 2,
  /** The store is held by another process or cannot be opened. */
  storeUnavailable: 3,
  /** The API host cannot be reached. */
  unreachable: 4,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCodeValue,
    message: string,
  ) {
    super(message);
  }
}

/** One line (plus validation details) per failure, for stderr; never includes a token. */
export function describeFailure(err: unknown): { exitCode: ExitCodeValue; message: string } {
  if (err instanceof CliError) return { exitCode: err.exitCode, message: err.message };
  if (err instanceof ApiError) {
    const lines = [
      `${err.code}: ${err.message}${err.requestId ? ` (request_id ${err.requestId})` : ''}`,
      ...err.validationErrors.map((v) => `  ${v.path}: ${v.message} [${v.code}]`),
    ];
    return { exitCode: ExitCode.failed, message: lines.join('\n') };
  }
  if (err instanceof ConnectionError) return { exitCode: ExitCode.unreachable, message: err.message };
  const e = err as Error & { name?: string };
  // ConfigError (server configuration) and anything unexpected.
  return { exitCode: ExitCode.failed, message: e?.message ?? String(err) };
}
