import { z } from 'zod';
import type { Access } from './access';
import { type ErrorCode, errorStatus } from './errors';

export const errorSchema = z
  .object({
    error: z.object({
      code: z.string().describe('Machine-readable, stable code (see the error table in docs).'),
      message: z.string().describe('Human-readable message.'),
      request_id: z.string().optional().describe('Correlation id; also in the X-Request-Id header.'),
      validation_errors: z
        .array(z.object({ path: z.string(), code: z.string(), message: z.string() }))
        .optional()
        .describe('Field-level errors of a validation failure.'),
      detailed_error: z.string().optional().describe('Sanitized extra detail, when safe.'),
    }),
  })
  .describe('The error wrapper of every failed request.');

/** The error responses every authenticated route can give; spread into `response`. */
export const errorResponses = {
  400: errorSchema,
  401: errorSchema,
  403: errorSchema,
  404: errorSchema,
  409: errorSchema,
  429: errorSchema,
  503: errorSchema,
} as const;

/**
 * The error wrapper under the status of each code a route's service can throw beyond the common
 * ones (`422 EMAIL_NOT_CONFIGURED`, `502 REMOTE_FAILED`); spread into `response` after
 * `errorResponses`.
 */
export function errorResponsesFor(...codes: ErrorCode[]): Record<number, typeof errorSchema> {
  return Object.fromEntries(codes.map((c) => [errorStatus[c], errorSchema]));
}

/** A 204 answer has no body. */
export const noContent = { 204: z.null().describe('No content.') } as const;

/**
 * The statuses the HTTP plumbing answers for an operation whatever its handler does, so the
 * document lists them for every operation without each route repeating them (docs/api-conventions.md):
 * 400 a path, query or JSON body that does not parse or validate; 408 and 431 a request too slow
 * or with too large a header block; 429 the rate limits; 503 the store unreachable; 401 and 403
 * the bearer token and permission checks of a non-public route; 404 an organization or resource
 * named in the path that the caller cannot see; 413 and 415 a request body over the size limit
 * or not JSON. A route's own `response` entry for a status wins over these.
 */
export function commonResponses(route: {
  method: string;
  url: string;
  access: Access | undefined;
}): Record<number, typeof errorSchema> {
  const out: Record<number, typeof errorSchema> = {
    400: errorSchema,
    408: errorSchema,
    429: errorSchema,
    431: errorSchema,
    503: errorSchema,
  };
  if (route.access?.kind !== 'public') {
    out[401] = errorSchema;
    out[403] = errorSchema;
  }
  if (route.access?.kind === 'org' || /\/:/.test(route.url)) out[404] = errorSchema;
  if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method.toUpperCase())) {
    out[413] = errorSchema;
    out[415] = errorSchema;
  }
  return out;
}
