import { z } from 'zod';
import { allowPrivateHostsField, httpUrlField, secretField, timeoutSecondsField } from '../fields';

// The HTTP connector shapes of docs/connectors/http.md (config, credentials, operation
// statement) as zod schemas; the server validates requests with these.

/** A path below base_url: never an absolute URL, never a scheme-relative `//host`. */
const relativePath = (what: string) =>
  z
    .string()
    .min(1)
    .max(2048)
    .refine((v) => !/^[a-z][a-z0-9+.-]*:/i.test(v) && !v.startsWith('//'), 'must be a path, not a URL')
    .refine((v) => !/[\s#]/.test(v), 'must not contain spaces or a fragment')
    .describe(what);

export const httpConfigSchema = z
  .object({
    base_url: httpUrlField(
      'Base URL of the API (scheme http or https). Statement and health paths are appended to it.',
    ),
    health_path: relativePath(
      'Path below base_url that the connection test requests with GET (default `/`).',
    ).default('/'),
    timeout_seconds: timeoutSecondsField(300, 5).describe(
      'Timeout of each request in seconds, 1 to 300 (default 5).',
    ),
    openapi_url: httpUrlField(
      'URL of an OpenAPI 3.x or Swagger 2.0 document (JSON or YAML) for schema import and operation browsing.',
    ).optional(),
    openapi_fetch_timeout_seconds: timeoutSecondsField(60, 10).describe(
      'Timeout for fetching the OpenAPI document in seconds, 1 to 60 (default 10).',
    ),
    allow_private_hosts: allowPrivateHostsField,
  })
  .strict()
  .describe('HTTP connector configuration. Contains no credentials.');
export type HttpConfig = z.output<typeof httpConfigSchema>;

export const httpCredentialsSchema = z
  .object({
    bearer_token: secretField('Sent as `Authorization: Bearer <token>`.').optional(),
    username: z.string().min(1).max(1024).optional().describe('User name for HTTP Basic authentication.'),
    password: secretField(
      'Password for HTTP Basic authentication; required when username is set.',
    ).optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.bearer_token !== undefined && (c.username !== undefined || c.password !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['bearer_token'],
        message: 'use either bearer_token or username/password (Basic), not both',
      });
    }
    if (c.username !== undefined && c.password === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['password'],
        message: 'password is required when username is set',
      });
    }
    if (c.password !== undefined && c.username === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['username'],
        message: 'username is required when password is set',
      });
    }
  })
  .describe(
    'HTTP credentials: bearer_token, or username and password (Basic); `{}` for a public endpoint. Write-only.',
  );
export type HttpCredentials = z.output<typeof httpCredentialsSchema>;

export const httpMethods = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD'] as const;
export type HttpMethod = (typeof httpMethods)[number];

// Credentials belong in the connection (seed rule 2), and the transport owns framing headers.
export const RESERVED_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'upgrade',
  'te',
  'trailer',
  'keep-alive',
  'expect',
]);

const scalar = z.union([z.string(), z.number(), z.boolean()]);

export const httpStatementSchema = z
  .object({
    type: z.literal('http').describe('Statement type: `http`.'),
    method: z.enum(httpMethods).describe('HTTP method.'),
    path: relativePath('Path relative to base_url; `{{name}}` placeholders are URL-encoded.'),
    query_params: z
      .record(z.string().min(1).max(256), z.union([scalar, z.null(), z.array(scalar)]))
      .optional()
      .describe('Query string values; an array repeats the key, null omits it. Placeholders allowed.'),
    headers: z
      .record(
        z
          .string()
          .min(1)
          .max(256)
          .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'not a valid header name')
          .refine((h) => !RESERVED_HEADERS.has(h.toLowerCase()), {
            message: 'this header is set by the connection (credentials belong in the data source)',
          }),
        z.string().max(8192),
      )
      .optional()
      .describe('Non-secret request headers. Placeholders allowed.'),
    body: z
      .unknown()
      .optional()
      .describe(
        'JSON value (placeholders become JSON values), or an object of scalars for `application/x-www-form-urlencoded` and `multipart/form-data` bodies. An explicit null is sent only as JSON.',
      ),
  })
  .strict()
  .describe('HTTP operation statement of a saved query.');
export type HttpStatement = z.output<typeof httpStatementSchema>;
