import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { timeOrderedId } from '../db/ids';
import { AppError, errorBody, type ValidationIssue } from './errors';

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
]);

function isUnavailable(err: any): boolean {
  if (!err || typeof err !== 'object') return false;
  const code = String(err.code ?? '');
  if (CONNECTION_CODES.has(code) || code.startsWith('08')) return true;
  const msg = String(err.message ?? '');
  if (
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end/.test(
      msg,
    )
  )
    return true;
  return err.cause ? isUnavailable(err.cause) : false;
}

function pgCode(err: any): string | undefined {
  if (!err || typeof err !== 'object') return undefined;
  if (typeof err.code === 'string' && /^[0-9A-Z]{5}$/.test(err.code)) return err.code;
  return err.cause ? pgCode(err.cause) : undefined;
}

type RawIssue = {
  path: PropertyKey[];
  code: string;
  message: string;
  keys?: string[];
  errors?: RawIssue[][];
};

/**
 * A union (`oneOf`) that matched no member: the member the fields sent fit best (fewest refused
 * or missing fields) gives the precise field errors; on a tie the union's own message, which
 * states the rule ("send exactly one of …").
 */
function unionMember(errors: RawIssue[][]): RawIssue[] | null {
  const misfit = (issues: RawIssue[]) =>
    issues.filter(
      (i) =>
        i.code === 'unrecognized_keys' ||
        i.code === 'invalid_union' ||
        (i.code === 'invalid_type' && /received undefined$/.test(i.message)),
    ).length;
  const scores = errors.map(misfit);
  const best = Math.min(...scores);
  return scores.filter((n) => n === best).length === 1 ? errors[scores.indexOf(best)] : null;
}

function flatten(v: any): { segments: string[]; code: string; message: string; keys?: string[] }[] {
  const segments = String(v.instancePath ?? '')
    .split('/')
    .filter(Boolean);
  const errors: RawIssue[][] | undefined = v.keyword === 'invalid_union' ? v.params?.errors : undefined;
  const member = errors ? unionMember(errors) : null;
  if (!member)
    return [{ segments, code: String(v.keyword ?? 'invalid'), message: v.message, keys: v.params?.keys }];
  return member.map((i) => ({
    segments: [...segments, ...i.path.map(String)],
    code: i.code,
    message: i.message,
    keys: i.keys,
  }));
}

/** Zod issues as reported by fastify-type-provider-zod, turned into our field-level errors. */
function validationIssues(err: FastifyError): ValidationIssue[] {
  const ctx = (err as any).validationContext as string | undefined;
  return (err.validation ?? []).flatMap(flatten).map((v) => {
    const segments = v.segments;
    const base = ctx && ctx !== 'body' ? ctx : '';
    const path = [base, ...segments].filter(Boolean).join('.') || '(root)';
    let code = v.code;
    let message = String(v.message ?? 'invalid value');
    if (code === 'unrecognized_keys') {
      code = 'unknown_field';
      const keys: string[] = Array.isArray(v.keys) ? v.keys : [];
      message = `unknown field(s): ${keys.join(', ')}`;
    }
    return { path, code, message };
  });
}

export function toAppError(err: any): AppError {
  if (err instanceof AppError) return err;
  if (err?.validation) {
    const issues = validationIssues(err);
    // ENTITY_NAME_INVALID answers a name of the wrong length (docs/api-conventions.md); a name holding
    // control characters (an `invalid_format` issue) is an ordinary VALIDATION_FAILED.
    const nameIssue = issues.find(
      (i) => (i.path === 'name' || i.path.endsWith('.name')) && i.code !== 'invalid_format',
    );
    if (nameIssue && (err as any).validationContext === 'body') {
      return new AppError('ENTITY_NAME_INVALID', 'name must be 1 to 100 characters', {
        validationErrors: issues,
      });
    }
    return new AppError('VALIDATION_FAILED', 'the request is not valid', { validationErrors: issues });
  }
  switch (err?.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'request bodies must be application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', 'the request body is larger than the limit');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('VALIDATION_FAILED', 'the request body is not valid JSON', {
        validationErrors: [
          { path: '(body)', code: 'invalid_json', message: 'the request body is not valid JSON' },
        ],
      });
  }
  if (err instanceof SyntaxError && err.message.includes('JSON')) {
    return new AppError('VALIDATION_FAILED', 'the request body is not valid JSON', {
      validationErrors: [
        { path: '(body)', code: 'invalid_json', message: 'the request body is not valid JSON' },
      ],
    });
  }
  if (err?.statusCode === 429) return new AppError('RATE_LIMITED', 'too many requests; retry later');
  if (isUnavailable(err))
    return new AppError('UNAVAILABLE', 'the service is temporarily unavailable; retry shortly');
  const code = pgCode(err);
  if (code === '23505') return new AppError('CONFLICT', 'a resource with that identifier already exists');
  // A row still referenced elsewhere (for example a data source bound to a pipeline).
  if (code === '23503') return new AppError('CONFLICT', 'the resource is still in use by another resource');
  // Text PostgreSQL cannot store (a NUL character): the client's input, not our fault.
  if (code === '22021' || code === '22P05') {
    return new AppError('VALIDATION_FAILED', 'the request contains characters that cannot be stored', {
      validationErrors: [
        { path: '(body)', code: 'invalid_characters', message: 'text must not contain NUL characters' },
      ],
    });
  }
  return new AppError('INTERNAL', 'internal error');
}

/**
 * An error as a log line may show it. Drizzle puts every bound parameter (token hashes, emails,
 * free text, ciphertexts) into its message, stack and `params`, and a driver error's `detail`
 * repeats row values: keep the query text, codes and frames, drop the values.
 */
export function loggableError(err: unknown, depth = 0): Record<string, unknown> | undefined {
  if (!err || typeof err !== 'object' || depth > 4) return undefined;
  const e = err as Record<string, any>;
  const withoutParams = (s: unknown) =>
    typeof s === 'string' ? s.replace(/\nparams: [\s\S]*/, '') : undefined;
  const frames =
    typeof e.stack === 'string'
      ? e.stack
          .split('\n')
          .filter((l: string) => /^\s+at /.test(l))
          .join('\n')
      : undefined;
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return {
    type: text(e.constructor?.name) ?? 'Error',
    message: withoutParams(e.message),
    code: text(e.code),
    query: text(e.query),
    table: text(e.table),
    constraint: text(e.constraint),
    routine: text(e.routine),
    stack: frames,
    cause: loggableError(e.cause, depth + 1),
  };
}

/**
 * Errors Fastify and Node raise before a request reaches the error handler: a path whose
 * percent-encoding does not decode, a path parameter over the router's maxParamLength, and
 * whatever Node's HTTP parser refuses (a header block over the limit, a request line that is not
 * HTTP, a client too slow to send its headers). All of them get the wrapper and X-Request-Id.
 */
export function frameworkErrorOptions() {
  return {
    frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
      const tooLong = err.code === 'FST_ERR_MAX_PARAM_LENGTH';
      const issue = tooLong
        ? { path: '(path)', code: 'too_long', message: 'a path parameter is longer than allowed' }
        : { path: '(path)', code: 'invalid_encoding', message: 'the path is not valid percent-encoding' };
      const appErr =
        err.code === 'FST_ERR_BAD_URL' || tooLong
          ? new AppError('VALIDATION_FAILED', 'the request path is not valid', { validationErrors: [issue] })
          : new AppError('INTERNAL', 'internal error');
      reply.header('x-request-id', req.id);
      return reply.status(appErr.status).send(errorBody(appErr, req.id));
    },
    clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket) {
      // A reset connection has nobody left to answer.
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      let appErr: AppError;
      if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
        appErr = new AppError('REQUEST_TIMEOUT', 'the request was not received in time');
      else if (err.code === 'HPE_HEADER_OVERFLOW')
        appErr = new AppError('HEADERS_TOO_LARGE', 'the request headers are larger than the limit');
      else
        appErr = new AppError('VALIDATION_FAILED', 'the request is not valid HTTP', {
          validationErrors: [
            { path: '(request)', code: 'malformed_http', message: 'the request is not valid HTTP' },
          ],
        });
      const id = timeOrderedId();
      const body = JSON.stringify(errorBody(appErr, id));
      if (socket.writable) {
        socket.write(
          `HTTP/1.1 ${appErr.status} ${statusText(appErr.status)}\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\n` +
            `X-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
        );
      }
      socket.destroy();
    },
  };
}

const statusText = (status: number) =>
  ({ 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' })[status] ?? 'Error';

export function installErrorHandling(app: FastifyInstance, opts: { allowedMethods(url: string): string[] }) {
  app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    let appErr: AppError;
    try {
      appErr = toAppError(err);
    } catch {
      appErr = new AppError('INTERNAL', 'internal error');
    }
    if (appErr.code === 'INTERNAL') req.log.error({ err: loggableError(err) }, 'unhandled error');
    else if (appErr.code === 'UNAVAILABLE')
      req.log.warn({ errCode: (err as any)?.code }, 'store unavailable');
    for (const [k, v] of Object.entries(appErr.extra.headers ?? {})) reply.header(k, v);
    if (appErr.code === 'METHOD_NOT_ALLOWED' && !reply.hasHeader('allow')) {
      reply.header('allow', opts.allowedMethods(req.url).join(', '));
    }
    return reply.status(appErr.status).send(errorBody(appErr, req.id));
  });

  app.setNotFoundHandler((req, reply) => {
    const methods = opts.allowedMethods(req.url);
    if (methods.length > 0) {
      reply.header('allow', methods.join(', '));
      const e = new AppError('METHOD_NOT_ALLOWED', `method ${req.method} is not allowed here`);
      return reply.status(405).send(errorBody(e, req.id));
    }
    return reply.status(404).send(errorBody(new AppError('NOT_FOUND', 'route not found'), req.id));
  });
}
