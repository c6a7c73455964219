// One error type, one code→status table, one envelope (docs/api-conventions.md#errors).
export const errorStatus = {
  VALIDATION_FAILED: 400,
  ENTITY_NAME_INVALID: 400,
  API_TOKEN_NOT_ACCEPTED: 400,
  OAUTH_STATE_INVALID: 400,
  OAUTH_FAILED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PROTECTED_ENVIRONMENT_CONFIRMATION_REQUIRED: 409,
  PIPELINE_NOT_DEPLOYED: 409,
  REQUEST_TIMEOUT: 408,
  REPOSITORY_MISMATCH: 409,
  PROOF_NOT_COMPILABLE: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  PRIVATE_HOST_BLOCKED: 422,
  CONNECTOR_OPERATION_UNSUPPORTED: 422,
  EMAIL_NOT_CONFIGURED: 422,
  WEBHOOK_BODY_INVALID: 422,
  WEBHOOK_INPUT_MAPPING_FAILED: 422,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL: 500,
  /** A remote system a data source names failed; detailed_error carries the connector's code. */
  REMOTE_FAILED: 502,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export type ValidationIssue = { path: string; code: string; message: string };

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: {
      validationErrors?: ValidationIssue[];
      detailedError?: string;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
    this.status = errorStatus[code];
  }
}

export const notFound = (what = 'resource') => new AppError('NOT_FOUND', `${what} not found`);
export const forbidden = (message = 'you do not have permission to perform this action') =>
  new AppError('FORBIDDEN', message);
export const conflict = (message: string) => new AppError('CONFLICT', message);
export const unauthenticated = () => new AppError('UNAUTHENTICATED', 'a valid bearer token is required');
export const validationFailed = (issues: ValidationIssue[], message = 'the request is not valid') =>
  new AppError('VALIDATION_FAILED', message, { validationErrors: issues });

export type ErrorBody = {
  error: {
    code: ErrorCode;
    message: string;
    request_id?: string;
    validation_errors?: ValidationIssue[];
    detailed_error?: string;
  };
};

export function errorBody(err: AppError, requestId: string): ErrorBody {
  return {
    error: {
      code: err.code,
      message: err.message,
      request_id: requestId,
      ...(err.extra.validationErrors ? { validation_errors: err.extra.validationErrors } : {}),
      ...(err.extra.detailedError ? { detailed_error: err.extra.detailedError } : {}),
    },
  };
}
