// The one error every connector throws, and its codes (re-exported by types.ts, the contract
// every connector folder implements).

/**
 * Every code a connector throws, and whether trying the same call again can help: a refused or
 * reset connection, a timeout and a rate limit pass; a wrong name, credential, statement or
 * permission stays wrong however often it is tried (docs/runs.md "Retries").
 */
export const connectorErrorCodes = {
  CONNECTION_FAILED: { retryable: true },
  TIMEOUT: { retryable: true },
  /** The remote's rate limit or quota answered; the message says when to retry. */
  RATE_LIMITED: { retryable: true },
  /** The name does not resolve: a typo does not heal by waiting. */
  HOST_NOT_FOUND: { retryable: false },
  AUTHENTICATION_FAILED: { retryable: false },
  PERMISSION_DENIED: { retryable: false },
  HEALTH_PATH_NOT_GET: { retryable: false },
  /** The remote answered with an error of its own; a throw site that knows it is passing says so. */
  REMOTE_ERROR: { retryable: false },
  INVALID_OPENAPI: { retryable: false },
  OPENAPI_UNREACHABLE: { retryable: false },
  PRIVATE_HOST_BLOCKED: { retryable: false },
  RESPONSE_TOO_LARGE: { retryable: false },
  TOO_MANY_REDIRECTS: { retryable: false },
  INVALID_STATEMENT: { retryable: false },
  QUERY_FAILED: { retryable: false },
  UNSUPPORTED_OPERATION: { retryable: false },
  /** A named remote object that does not exist: an S3 bucket or key; a repository, branch, commit or file. */
  NOT_FOUND: { retryable: false },
  /** The SSH server's host key is not the pinned one (git over SSH). */
  HOST_KEY_MISMATCH: { retryable: false },
} as const satisfies Record<string, { retryable: boolean }>;

export type ConnectorErrorCode = keyof typeof connectorErrorCodes;

/**
 * The one error a connector throws. `message` is shown to users and stored (test_error,
 * schema_diagnostic), so it must already be sanitized: no credential, no raw provider body.
 * `retryable` comes from the code's row in connectorErrorCodes unless the throw site knows
 * better (a remote's own "try again later").
 */
export class ConnectorError extends Error {
  readonly retryable: boolean;
  constructor(
    readonly code: ConnectorErrorCode,
    message: string,
    options?: { retryable?: boolean },
  ) {
    super(message);
    this.retryable = options?.retryable ?? connectorErrorCodes[code].retryable;
  }
}
