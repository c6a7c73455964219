import { EgressBlockedError } from '../egress';
import { ConnectorError } from '../types';

// Driver errors become ConnectorErrors with messages we write ourselves (or the server's
// message, scrubbed): a message is shown to users and stored, so it must never carry the
// password, a connection string or a bound parameter value.

/** Removes every occurrence of the given secrets (password, parameter values) from text. */
export function scrub(message: string, secrets: readonly unknown[]): string {
  let out = message;
  const texts = secrets
    .filter((s) => s !== null && s !== undefined && typeof s !== 'boolean')
    .map((s) => (typeof s === 'string' ? s : JSON.stringify(s)))
    .filter((s) => s.length >= 2)
    .sort((a, b) => b.length - a.length);
  for (const t of texts) out = out.split(t).join('[redacted]');
  return out.length > 2000 ? `${out.slice(0, 2000)}…` : out;
}

/** Secrets of one call: the password and every parameter value (also as bound JSON text). */
export function secretsOf(
  credentials: { password?: string } | null,
  values: readonly unknown[] = [],
): unknown[] {
  return [credentials?.password, ...values];
}

/**
 * Network-level failures common to both drivers; null when `err` is something else.
 * `where` is `host:port` as configured (never the resolved address of a private name).
 */
export function networkError(err: any, where: string, timeoutSeconds: number): ConnectorError | null {
  if (err instanceof ConnectorError) return err;
  if (err instanceof EgressBlockedError) return new ConnectorError('PRIVATE_HOST_BLOCKED', err.message);
  const code = typeof err?.code === 'string' ? err.code : '';
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
    case 'EAI_FAIL':
      return new ConnectorError('HOST_NOT_FOUND', `the host of ${where} could not be resolved`);
    case 'ECONNREFUSED':
      return new ConnectorError(
        'CONNECTION_FAILED',
        `connection to ${where} was refused (is the server listening?)`,
      );
    case 'ETIMEDOUT':
      return new ConnectorError('TIMEOUT', `no answer from ${where} within ${timeoutSeconds} seconds`);
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new ConnectorError('CONNECTION_FAILED', `${where} is unreachable from this network`);
    case 'ECONNRESET':
    case 'EPIPE':
      return new ConnectorError('CONNECTION_FAILED', `${where} closed the connection unexpectedly`);
    default:
      break;
  }
  if (/^ERR_TLS_|CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_SSL/.test(code)) {
    return new ConnectorError(
      'CONNECTION_FAILED',
      `TLS with ${where} failed: the server certificate was not accepted (${code})`,
    );
  }
  return null;
}

/** Runs `work` with a deadline; `onTimeout` tears the connection down so nothing keeps waiting. */
export async function withDeadline<T>(
  work: Promise<T>,
  ms: number,
  onTimeout: () => void,
  error: () => ConnectorError,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(error());
    }, ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
    // The losing promise may reject later (a destroyed socket); that rejection is expected.
    work.catch(() => {});
  }
}
