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

export function createLogger(opts: { level: string; stream?: Writable }): Logger {
  return pino(
    {
      level: opts.level,
      redact: { paths: redactPaths, censor: '[redacted]' },
      base: { service: 'sluice' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    opts.stream ?? process.stdout,
  );
}

// A token pasted into a path (`/api-keys/slc_key_…`) is still a token: its format says so.
const TOKEN_IN_PATH = /slc_(pat|key)_[0-9A-Za-z]+/g;

/** Request lines carry the path and the names of query parameters, never their values. */
export function requestSerializer(req: { method: string; url: string; id: string; ip?: string }) {
  const q = req.url.indexOf('?');
  const path = (q === -1 ? req.url : req.url.slice(0, q)).replace(TOKEN_IN_PATH, 'slc_$1_[redacted]');
  const queryKeys = q === -1 ? undefined : [...new URLSearchParams(req.url.slice(q + 1)).keys()];
  return {
    id: req.id,
    method: req.method,
    path,
    ...(queryKeys ? { query_keys: queryKeys } : {}),
    ip: req.ip,
  };
}
