import http from 'node:http';
import https from 'node:https';
import type { S3Client } from '@aws-sdk/client-s3';
import { EgressBlockedError, guardedLookup, resolveAllowed } from '../egress';
import { type ConnectorContext, ConnectorError } from '../types';
import type { S3Config, S3Credentials } from './config';

// One S3 client per call, built from the data source. Every connection resolves its host
// through the egress guard (the lookup of both agents), and the configured host is checked up
// front too, because an IP literal never reaches a lookup function.

export type S3Conn = { config: S3Config; credentials: S3Credentials | null };

export type S3Session = {
  client: S3Client;
  sdk: typeof import('@aws-sdk/client-s3');
  bucket: string;
  /** The configured prefix, normalised to end with `/` (or empty). */
  prefix: string;
  /** Where messages say we talked to: the endpoint host or the AWS region, never a secret. */
  where: string;
  timeoutMs: number;
  /** Maps any failure of this session to a ConnectorError with a message we wrote. */
  error(err: unknown, what: string): ConnectorError;
  close(): void;
};

/** The host the SDK will connect to (virtual-hosted style puts the bucket in front of it). */
function endpointHost(config: S3Config): string {
  if (config.endpoint) return new URL(config.endpoint).hostname.replace(/^\[|\]$/g, '');
  return `s3.${config.region}.amazonaws.com`;
}

export function normalisedPrefix(prefix: string | undefined): string {
  if (!prefix) return '';
  const p = prefix.replace(/^\/+/, '');
  return p === '' || p.endsWith('/') ? p : `${p}/`;
}

/** The SDK `openS3` loads on its first call (a worker's warm start loads it ahead). */
export const s3Module = () => import('@aws-sdk/client-s3');

export async function openS3(conn: S3Conn, ctx: ConnectorContext): Promise<S3Session> {
  const { config } = conn;
  if (!conn.credentials)
    throw new ConnectorError('AUTHENTICATION_FAILED', 'the data source has no credentials');
  const host = endpointHost(config);
  const where = config.endpoint ? new URL(config.endpoint).host : `S3 (${config.region})`;
  const timeoutMs = config.timeout_seconds * 1000;
  const mapError = (err: unknown, what: string) =>
    s3Error(err, what, where, config.bucket, config.timeout_seconds);
  try {
    await resolveAllowed(host, ctx.policy);
  } catch (err) {
    throw mapError(err, 'connect');
  }
  const sdk = await s3Module();
  const lookup = guardedLookup(ctx.policy) as any;
  const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 16, lookup });
  const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 16, lookup });
  const client = new sdk.S3Client({
    region: config.region,
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    forcePathStyle: config.force_path_style,
    credentials: {
      accessKeyId: conn.credentials.access_key_id,
      secretAccessKey: conn.credentials.secret_access_key,
      ...(conn.credentials.session_token ? { sessionToken: conn.credentials.session_token } : {}),
    },
    // Many S3-compatible stores refuse the newer default checksums on streamed uploads.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 2,
    requestHandler: {
      httpAgent,
      httpsAgent,
      connectionTimeout: timeoutMs,
      // Idle time on the socket, so long transfers are fine while bytes keep moving.
      requestTimeout: timeoutMs,
      throwOnRequestTimeout: true,
      socketAcquisitionWarningTimeout: timeoutMs * 4,
    } as any,
  });
  return {
    client,
    sdk,
    bucket: config.bucket,
    prefix: normalisedPrefix(config.prefix),
    where,
    timeoutMs,
    error: mapError,
    close() {
      client.destroy();
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

const AUTH = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidToken',
  'ExpiredToken',
  'TokenRefreshRequired',
  'InvalidSecurity',
  'AuthorizationHeaderMalformed',
]);

/**
 * SDK and network errors as ConnectorErrors. Messages are ours: the provider's message can
 * echo request details (the string-to-sign names the access key), so it is never passed on.
 */
export function s3Error(
  err: unknown,
  what: string,
  where: string,
  bucket: string,
  timeoutSeconds: number,
): ConnectorError {
  if (err instanceof ConnectorError) return err;
  if (err instanceof EgressBlockedError) return new ConnectorError('PRIVATE_HOST_BLOCKED', err.message);
  const e = err as any;
  const name: string = typeof e?.name === 'string' ? e.name : '';
  const code: string = typeof e?.code === 'string' ? e.code : (e?.Code ?? '');
  const status: number | undefined = e?.$metadata?.httpStatusCode ?? e?.$response?.statusCode;
  if (code === 'PRIVATE_HOST_BLOCKED') return new ConnectorError('PRIVATE_HOST_BLOCKED', String(e.message));
  if (['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL'].includes(code))
    return new ConnectorError('HOST_NOT_FOUND', `the host of ${where} could not be resolved`);
  if (code === 'ECONNREFUSED')
    return new ConnectorError(
      'CONNECTION_FAILED',
      `connection to ${where} was refused (is the service listening?)`,
    );
  if (
    name === 'TimeoutError' ||
    name === 'RequestTimeout' ||
    code === 'ETIMEDOUT' ||
    code === 'TimeoutError' ||
    code === 'RequestTimeout'
  )
    return new ConnectorError('TIMEOUT', `no answer from ${where} within ${timeoutSeconds} seconds`);
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED')
    return new ConnectorError('CONNECTION_FAILED', `${where} closed the connection unexpectedly`);
  if (name === 'AbortError') return new ConnectorError('TIMEOUT', `the ${what} was canceled`);
  if (/^ERR_TLS_|CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_SSL/.test(code))
    return new ConnectorError(
      'CONNECTION_FAILED',
      `TLS with ${where} failed: the certificate was not accepted (${code})`,
    );
  if (AUTH.has(name) || AUTH.has(code))
    return new ConnectorError(
      'AUTHENTICATION_FAILED',
      `${where} refused the credentials (${name || code}): check the access key id and secret access key`,
    );
  if (name === 'NoSuchBucket')
    return new ConnectorError('NOT_FOUND', `bucket ${bucket} does not exist at ${where}`);
  if (name === 'NoSuchKey' || (name === 'NotFound' && what !== 'bucket check'))
    return new ConnectorError('NOT_FOUND', `the object of the ${what} does not exist in bucket ${bucket}`);
  if (name === 'NotFound' || status === 404)
    return new ConnectorError('NOT_FOUND', `bucket ${bucket} does not exist at ${where}`);
  if (name === 'AccessDenied' || name === 'Forbidden' || status === 403)
    return new ConnectorError('PERMISSION_DENIED', `${where} denied the ${what} in bucket ${bucket}`);
  if (name === 'PermanentRedirect' || status === 301)
    return new ConnectorError(
      'CONNECTION_FAILED',
      `bucket ${bucket} is in another region than ${where}: set region to the bucket's region`,
    );
  if (typeof status === 'number')
    return new ConnectorError(
      'REMOTE_ERROR',
      `${where} answered HTTP ${status}${name ? ` (${name})` : ''} to the ${what}`,
    );
  return new ConnectorError('CONNECTION_FAILED', `the ${what} at ${where} failed${code ? ` (${code})` : ''}`);
}
