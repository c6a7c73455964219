import { z } from 'zod';

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

/** A 204 answer has no body. */
export const noContent = { 204: z.null().describe('No content.') } as const;
