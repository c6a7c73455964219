// The API's one error envelope (docs/api-conventions.md#errors), as the client surfaces it.
export type ValidationIssue = { path: string; code: string; message: string };

export type ErrorEnvelope = {
  error: {
    code: string;
    message: string;
    request_id?: string;
    validation_errors?: ValidationIssue[];
    detailed_error?: string;
  };
};

/** A request the API answered with an error status. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  /** Stable machine-readable code, e.g. `UNAUTHENTICATED`; `HTTP_<status>` when the body was not the envelope. */
  readonly code: string;
  readonly requestId: string | undefined;
  readonly validationErrors: ValidationIssue[];
  readonly detailedError: string | undefined;

  constructor(status: number, body: ErrorEnvelope['error'], requestId?: string) {
    super(body.message);
    this.status = status;
    this.code = body.code;
    this.requestId = body.request_id ?? requestId;
    this.validationErrors = body.validation_errors ?? [];
    this.detailedError = body.detailed_error;
  }
}

/** The server could not be reached at all (refused, DNS, reset, timeout). */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError';
  constructor(
    readonly baseUrl: string,
    cause: unknown,
  ) {
    // fetch wraps the socket error: `TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })`.
    const inner = (cause as { cause?: { code?: string; message?: string } })?.cause;
    const why = inner?.code ?? inner?.message ?? (cause as Error)?.message ?? 'unknown';
    super(`cannot reach the Sluice API at ${baseUrl} (${why})`, { cause });
  }
}

function isEnvelope(v: unknown): v is ErrorEnvelope {
  const e = (v as ErrorEnvelope | null)?.error;
  return typeof e === 'object' && e !== null && typeof e.code === 'string' && typeof e.message === 'string';
}

/** Builds the ApiError of a failed response; anything that is not the envelope (a proxy page) still gets a code. */
export async function apiErrorOf(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const requestId = response.headers.get('x-request-id') ?? undefined;
  if (isEnvelope(body)) return new ApiError(response.status, body.error, requestId);
  const message = `HTTP ${response.status} ${response.statusText}`.trim();
  return new ApiError(response.status, { code: `HTTP_${response.status}`, message }, requestId);
}
