import type { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';

// Anything that could hold a credential is censored before a line is written.
export const redactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.token',
  '*.secret',
  '*.bearer_token',
  '*.credentials',
  '*.authorization',
  'body',
  'req.body',
];

/** Each logger's sibling without redaction paths, on the same stream (see requestLineLogger). */
const lineLoggers = new WeakMap<Logger, Logger>();

export function createLogger(opts: { level: string; stream?: Writable }): Logger {
  const stream = opts.stream ?? process.stdout;
  const common = { level: opts.level, base: { service: 'sluice' }, timestamp: pino.stdTimeFunctions.isoTime };
  const log = pino({ ...common, redact: { paths: redactPaths, censor: '[redacted]' } }, stream);
  lineLoggers.set(log, pino(common, stream));
  return log;
}

/**
 * The logger of the per-request line: the same level, base fields and stream, without the
 * redaction paths, whose cost (a walk of every logged object for each path) is most of a line's.
 * Only for lines built from whitelisted fields, which cannot hold a secret: the request line
 * (method, path with tokens masked, query parameter names, address, id, status, time).
 */
export function requestLineLogger(log: Logger): Logger {
  return lineLoggers.get(log) ?? log;
}

/**
 * A request's child logger, made on its first use: most requests log nothing but their request
 * line, which goes through requestLineLogger, so the child (bindings serialized, serializers
 * merged) would be built for nothing. Fastify's `childLoggerFactory`.
 */
export class LazyChildLogger {
  #child: Logger | undefined;
  readonly #parent: Logger;
  readonly #bindings: pino.Bindings;
  readonly #opts: pino.ChildLoggerOptions;

  constructor(parent: Logger, bindings: pino.Bindings, opts: pino.ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#opts = opts;
  }

  #real(): Logger {
    this.#child ??= this.#parent.child(this.#bindings, this.#opts);
    return this.#child;
  }

  #log(level: pino.Level, args: unknown[]) {
    // A disabled level writes nothing: no child for it either.
    if (this.#child === undefined && this.#opts.level === undefined && !this.#parent.isLevelEnabled(level)) {
      return;
    }
    (this.#real()[level] as (...a: unknown[]) => void)(...args);
  }

  get level(): string {
    return this.#child?.level ?? this.#opts.level ?? this.#parent.level;
  }
  set level(level: string) {
    this.#real().level = level;
  }
  fatal(...args: unknown[]) {
    this.#log('fatal', args);
  }
  error(...args: unknown[]) {
    this.#log('error', args);
  }
  warn(...args: unknown[]) {
    this.#log('warn', args);
  }
  info(...args: unknown[]) {
    this.#log('info', args);
  }
  debug(...args: unknown[]) {
    this.#log('debug', args);
  }
  trace(...args: unknown[]) {
    this.#log('trace', args);
  }
  silent() {}
  isLevelEnabled(level: string): boolean {
    return this.#child?.isLevelEnabled(level) ?? this.#parent.isLevelEnabled(level);
  }
  child(bindings: pino.Bindings, opts?: pino.ChildLoggerOptions): Logger {
    return this.#real().child(bindings, opts);
  }
}

// A token pasted into a path (`/api-keys/slc_key_…`) is still a token: its format says so.
const TOKEN_IN_PATH = /slc_(pat|key)_[0-9A-Za-z]+/g;

/**
 * The names of a query string's parameters, decoded as URLSearchParams decodes them; a query
 * without `%` or `+` needs no decoding, so it is split by hand (this runs on every request).
 */
function queryKeys(query: string): string[] {
  if (query.includes('%') || query.includes('+')) return [...new URLSearchParams(query).keys()];
  const keys: string[] = [];
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    keys.push(eq === -1 ? part : part.slice(0, eq));
  }
  return keys;
}

// A token pasted where a name goes is masked like one in the path.
const masked = (text: string) =>
  text.includes('slc_') ? text.replace(TOKEN_IN_PATH, 'slc_$1_[redacted]') : text;

/** Request lines carry the path and the names of query parameters, never their values. */
export function requestSerializer(req: {
  method: string;
  url: string;
  originalUrl?: string;
  id: string;
  ip?: string;
}) {
  // The path as the client sent it: an app-host request answered by the API host's routes is
  // matched without its /api prefix (http/forwarded.ts).
  const url = req.originalUrl ?? req.url;
  const q = url.indexOf('?');
  const path = masked(q === -1 ? url : url.slice(0, q));
  if (q === -1) return { id: req.id, method: req.method, path, ip: req.ip };
  return {
    id: req.id,
    method: req.method,
    path,
    query_keys: queryKeys(url.slice(q + 1)).map(masked),
    ip: req.ip,
  };
}
