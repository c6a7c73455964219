import { Readable } from 'node:stream';
import { guardedDispatcher, undici } from '../egress';
import { type ConnectorContext, ConnectorError } from '../types';

// One outbound HTTP exchange of the HTTP connector: every connection (first request and each
// redirect hop) goes through the egress guard, redirects are followed by hand up to the limit,
// the whole exchange runs under one deadline and the body is read under a byte bound.

export type OutboundRequest = {
  method: string;
  url: URL;
  headers: Record<string, string>;
  /** A streamed body is sent once: a redirect that would resend it (307, 308) fails. */
  body?: string | Buffer | AsyncIterable<Uint8Array>;
  timeoutMs: number;
  /** Headers sent only while the request stays on the origin of `url` (credentials). */
  originHeaders?: Record<string, string>;
  /** Bytes kept of the body; beyond it the exchange fails with RESPONSE_TOO_LARGE. */
  maxBytes?: number;
};

export type InboundResponse = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  url: URL;
};

/** A response whose body is still on the wire. */
export type OpenResponse = Omit<InboundResponse, 'body'> & {
  /**
   * The body in chunks, under the byte bound. The timeout counts only time spent waiting on
   * the remote: a slow consumer downstream never times the exchange out.
   */
  body: AsyncIterable<Buffer>;
  /** Drops the exchange (idempotent); needed when the body is not read to its end. */
  close(): void;
};

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The host of a URL for messages: never its path or query (they may carry tokens). */
export const hostOf = (url: URL) => url.host;

/** A deadline that can be stopped while the other side (not the remote) holds things up. */
class Deadline {
  fired = false;
  private timer: NodeJS.Timeout | undefined;
  constructor(
    private readonly ms: number,
    private readonly onFire: () => void,
  ) {}
  arm() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.fired = true;
      this.onFire();
    }, this.ms);
  }
  disarm() {
    clearTimeout(this.timer);
  }
}

/** The whole exchange, body included, under one deadline (tests, schema import, queries). */
export async function sendHttp(req: OutboundRequest, ctx: ConnectorContext): Promise<InboundResponse> {
  const res = await exchange(req, ctx, false);
  const chunks: Buffer[] = [];
  for await (const chunk of res.body) chunks.push(chunk);
  return { status: res.status, headers: res.headers, url: res.url, body: Buffer.concat(chunks) };
}

/**
 * Opens an exchange for pipelines: resolves once the response headers are in, with the body
 * still to read. The timeout is idle time waiting on the remote (connect, each hop's headers,
 * each body chunk either way), so long streams in both directions are fine.
 */
export function openHttp(req: OutboundRequest, ctx: ConnectorContext): Promise<OpenResponse> {
  return exchange(req, ctx, true);
}

async function exchange(
  req: OutboundRequest,
  ctx: ConnectorContext,
  streaming: boolean,
): Promise<OpenResponse> {
  const maxBytes = Math.min(req.maxBytes ?? ctx.limits.maxResponseBytes, ctx.limits.maxResponseBytes);
  const controller = new AbortController();
  const deadline = new Deadline(req.timeoutMs, () => controller.abort());
  deadline.arm();
  const onOuterAbort = () => controller.abort();
  ctx.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const dispatcher = guardedDispatcher(ctx.policy, { connectTimeoutMs: req.timeoutMs });
  const origin = req.url.origin;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    deadline.disarm();
    ctx.signal?.removeEventListener('abort', onOuterAbort);
    dispatcher.close().catch(() => {});
  };

  let url = req.url;
  let method = req.method;
  let body: string | Buffer | Readable | undefined = req.body as string | Buffer | undefined;
  if (req.body !== undefined && typeof req.body !== 'string' && !Buffer.isBuffer(req.body)) {
    body = Readable.from(paced(req.body, deadline), { objectMode: false });
  }
  let headers = { ...req.headers };
  try {
    for (let hop = 0; ; hop++) {
      const sameOrigin = url.origin === origin;
      const res = await undici().request(url, {
        method: method as any,
        headers: { ...headers, ...(sameOrigin ? req.originHeaders : {}) },
        body,
        dispatcher,
        signal: controller.signal,
        // Streams are timed by the deadline above, which pauses while we (not the remote) wait.
        headersTimeout: streaming ? 0 : req.timeoutMs,
        bodyTimeout: streaming ? 0 : req.timeoutMs,
      });
      const location = res.headers.location;
      if (REDIRECTS.has(res.statusCode) && typeof location === 'string') {
        await res.body.dump();
        if (hop >= ctx.limits.maxRedirects) {
          throw new ConnectorError(
            'TOO_MANY_REDIRECTS',
            `more than ${ctx.limits.maxRedirects} redirects starting at ${hostOf(req.url)}`,
          );
        }
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw new ConnectorError('REMOTE_ERROR', `${hostOf(url)} redirected to an invalid location`);
        }
        if (next.protocol !== 'http:' && next.protocol !== 'https:') {
          throw new ConnectorError('REMOTE_ERROR', `${hostOf(url)} redirected to a non-HTTP location`);
        }
        // As browsers do: 303 (and 301/302 after POST) continue as GET without a body.
        if (
          res.statusCode === 303 ||
          ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')
        ) {
          if (method !== 'HEAD') method = 'GET';
          body = undefined;
          headers = withoutHeaders(headers, ['content-type']);
        } else if (body instanceof Readable) {
          throw new ConnectorError(
            'REMOTE_ERROR',
            `${hostOf(url)} answered ${res.statusCode}: the streamed body cannot be sent again; use the final URL`,
          );
        }
        url = next;
        continue;
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) {
        res.body.destroy();
        throw tooLarge(maxBytes);
      }
      if (streaming) deadline.disarm();
      const final = url;
      // Dropping an unread body makes undici emit an abort error nobody needs to hear.
      res.body.on('error', () => {});
      async function* chunks(): AsyncGenerator<Buffer> {
        let size = 0;
        const it = res.body[Symbol.asyncIterator]();
        try {
          for (;;) {
            if (streaming) deadline.arm();
            const next = await it.next();
            if (streaming) deadline.disarm();
            if (next.done) return;
            const chunk = next.value as Buffer;
            size += chunk.length;
            if (size > maxBytes) throw tooLarge(maxBytes);
            yield chunk;
          }
        } catch (err) {
          throw toConnectorError(err, final, deadline.fired, req.timeoutMs);
        } finally {
          res.body.destroy();
          close();
        }
      }
      return {
        status: res.statusCode,
        headers: res.headers,
        url,
        body: chunks(),
        close: () => {
          res.body.destroy();
          close();
        },
      };
    }
  } catch (err) {
    close();
    throw toConnectorError(err, url, deadline.fired, req.timeoutMs);
  }
}

/** Times a request body: the clock runs while the remote takes a chunk, not while we make one. */
async function* paced(body: AsyncIterable<Uint8Array>, deadline: Deadline): AsyncGenerator<Uint8Array> {
  const it = body[Symbol.asyncIterator]();
  try {
    for (;;) {
      deadline.disarm();
      const next = await it.next();
      deadline.arm();
      if (next.done) return;
      yield next.value;
    }
  } finally {
    await it.return?.();
  }
}

function withoutHeaders(headers: Record<string, string>, names: string[]) {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !names.includes(k.toLowerCase())));
}

const tooLarge = (max: number) =>
  new ConnectorError('RESPONSE_TOO_LARGE', `the response is larger than the limit of ${max} bytes`);

function codesOf(err: unknown): string[] {
  const out: string[] = [];
  let e: any = err;
  for (let i = 0; e && i < 5; i++, e = e.cause) {
    if (typeof e.code === 'string') out.push(e.code);
    if (Array.isArray(e.errors)) for (const inner of e.errors) if (inner?.code) out.push(inner.code);
  }
  return out;
}

/** Network failures as sanitized connector errors: host and reason, never path, query or headers. */
export function toConnectorError(
  err: unknown,
  url: URL,
  timedOut: boolean,
  timeoutMs: number,
): ConnectorError {
  if (err instanceof ConnectorError) return err;
  const codes = codesOf(err);
  const host = hostOf(url);
  const blocked = findBlocked(err);
  if (blocked) return new ConnectorError('PRIVATE_HOST_BLOCKED', blocked);
  if (
    timedOut ||
    codes.some((c) => c === 'UND_ERR_CONNECT_TIMEOUT' || c.endsWith('_TIMEOUT') || c === 'ETIMEDOUT')
  ) {
    return new ConnectorError('TIMEOUT', `${host} did not answer within ${Math.round(timeoutMs / 1000)} s`);
  }
  if (codes.some((c) => c === 'ENOTFOUND' || c === 'EAI_AGAIN' || c === 'EAI_NONAME' || c === 'EAI_NODATA')) {
    return new ConnectorError('HOST_NOT_FOUND', `host ${url.hostname} could not be resolved`);
  }
  if (codes.includes('ECONNREFUSED')) {
    return new ConnectorError('CONNECTION_FAILED', `${host} refused the connection`);
  }
  const tls = codes.find((c) => /CERT|TLS|SSL|SELF_SIGNED/.test(c));
  if (tls) return new ConnectorError('CONNECTION_FAILED', `TLS with ${host} failed (${tls})`);
  if (
    codes.some(
      (c) =>
        c === 'ECONNRESET' ||
        c === 'UND_ERR_SOCKET' ||
        c === 'EPIPE' ||
        c === 'EHOSTUNREACH' ||
        c === 'ENETUNREACH',
    )
  ) {
    return new ConnectorError('CONNECTION_FAILED', `the connection to ${host} failed (${codes[0]})`);
  }
  return new ConnectorError(
    'CONNECTION_FAILED',
    `the request to ${host} failed${codes[0] ? ` (${codes[0]})` : ''}`,
  );
}

function findBlocked(err: unknown): string | null {
  let e: any = err;
  for (let i = 0; e && i < 5; i++, e = e.cause) {
    if (e.code === 'PRIVATE_HOST_BLOCKED' && typeof e.message === 'string') return e.message;
  }
  return null;
}
