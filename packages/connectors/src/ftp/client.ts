import net from 'node:net';
import tls from 'node:tls';
import { Client, type FTPContext, FTPError, type FTPResponse } from 'basic-ftp';
import { connectForPassiveTransfer, parseEpsvResponse, parsePasvResponse } from 'basic-ftp/dist/transfer.js';
import { assertAddressAllowed, EgressBlockedError, resolveAllowed } from '../egress';
import { scrub, withDeadline } from '../relational/errors';
import { type ConnectorContext, ConnectorError } from '../types';
import type { FtpConn } from './config';

// One FTP session: the control connection goes to the address the egress guard checked, the
// session upgrades to explicit FTPS (AUTH TLS) whenever the server offers it, and every data
// connection goes through `guardedPassive`, which checks the address a PASV reply names.

/** A logged-in session; `close` is safe to call twice. */
export type FtpSession = {
  client: Client;
  /** True when the control (and data) connections are TLS. */
  secure: boolean;
  /** Where statement paths start: base_path, or the login directory. */
  home: string;
  /** A new session of the same connection (clean-up after a transfer broke this one). */
  reopen(): Promise<FtpSession>;
  /** Maps an error of this session to a ConnectorError with a message we wrote. */
  fail(err: unknown, doing: string): ConnectorError;
  close(): void;
};

// Certificates trusted for FTPS besides Node's own store (system roots and
// NODE_EXTRA_CA_CERTS): for embedders with a private CA, and for the test peers.
const extraCas: string[] = [];
export function trustFtpsCertificates(pems: readonly string[]): void {
  for (const pem of pems) if (!extraCas.includes(pem)) extraCas.push(pem);
}

function tlsOptions(host: string, address: string): tls.ConnectionOptions {
  return {
    host: address,
    // Certificates name the host the user configured, not the address we resolved.
    servername: net.isIP(host) ? undefined : host,
    checkServerIdentity: (_name, cert) => tls.checkServerIdentity(host, cert),
    ...(extraCas.length > 0 ? { ca: [...tls.rootCertificates, ...extraCas] } : {}),
  };
}

/**
 * The data connection of a transfer. EPSV keeps the control connection's address; a PASV
 * reply naming another address is refused (FTP bounce and SSRF through the server), except the
 * common NAT answer of a private address from a public server, which means "the same host".
 * The address we connect to passes the egress guard either way.
 */
export function passiveTarget(
  reply: { kind: 'epsv' | 'pasv'; message: string },
  control: string,
  ctx: Pick<ConnectorContext, 'policy'>,
): { host: string; port: number } {
  let target: { host: string; port: number };
  if (reply.kind === 'epsv') target = { host: control, port: parseEpsvResponse(reply.message) };
  else {
    const named = parsePasvResponse(reply.message);
    let host = named.host;
    if (host !== control.replace(/^::ffff:/, '')) {
      const nat = /^(10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|127\.|0\.)/.test(host);
      const controlPublic = !/^(10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|127\.)/.test(control);
      if (nat && controlPublic) host = control;
      else {
        throw new ConnectorError(
          'PERMISSION_DENIED',
          'the FTP server named another host for the data connection (PASV); that is refused',
        );
      }
    }
    target = { host, port: named.port };
  }
  if (!Number.isInteger(target.port) || target.port < 1 || target.port > 65535) {
    throw new ConnectorError('REMOTE_ERROR', 'the FTP server named an invalid data port');
  }
  assertAddressAllowed(target.host, ctx.policy);
  return target;
}

function guardedPassive(control: string, ctx: ConnectorContext) {
  let useEpsv = true;
  return async (ftp: FTPContext): Promise<FTPResponse> => {
    if (useEpsv) {
      try {
        const res = await ftp.request('EPSV');
        const t = passiveTarget({ kind: 'epsv', message: res.message }, control, ctx);
        await connectForPassiveTransfer(t.host, t.port, ftp);
        return res;
      } catch (err) {
        if (!(err instanceof FTPError)) throw err;
        useEpsv = false; // the server does not know EPSV: PASV from now on
      }
    }
    const res = await ftp.request('PASV');
    const t = passiveTarget({ kind: 'pasv', message: res.message }, control, ctx);
    await connectForPassiveTransfer(t.host, t.port, ftp);
    return res;
  };
}

const where = (conn: FtpConn) => `${conn.config.host}:${conn.config.port}`;

/** Any error of a session as a ConnectorError; the password never appears in a message. */
export function ftpError(err: unknown, conn: FtpConn, doing: string): ConnectorError {
  const secret = [conn.credentials?.password];
  if (err instanceof ConnectorError) return new ConnectorError(err.code, scrub(err.message, secret));
  if (err instanceof EgressBlockedError) return new ConnectorError('PRIVATE_HOST_BLOCKED', err.message);
  const e = err as { code?: unknown; message?: unknown };
  if (err instanceof FTPError) {
    const code = err.code;
    if (code === 530) {
      return new ConnectorError('AUTHENTICATION_FAILED', `the FTP server refused the login (reply ${code})`);
    }
    if (code === 550 || code === 553 || code === 450) {
      return new ConnectorError(
        'QUERY_FAILED',
        `${doing} failed: the FTP server answered ${code} (no such file or directory, or no permission)`,
      );
    }
    if (code === 552 || code === 452) {
      return new ConnectorError('REMOTE_ERROR', `${doing} failed: the FTP server is out of space (${code})`);
    }
    return new ConnectorError('REMOTE_ERROR', `${doing} failed: the FTP server answered ${code}`);
  }
  const sys = typeof e?.code === 'string' ? e.code : '';
  switch (sys) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
    case 'EAI_FAIL':
      return new ConnectorError('HOST_NOT_FOUND', `the host of ${where(conn)} could not be resolved`);
    case 'ECONNREFUSED':
      return new ConnectorError('CONNECTION_FAILED', `connection to ${where(conn)} was refused`);
    case 'ETIMEDOUT':
      return new ConnectorError('TIMEOUT', `no answer from ${where(conn)} in time`);
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new ConnectorError('CONNECTION_FAILED', `${where(conn)} is unreachable from this network`);
    case 'ECONNRESET':
    case 'EPIPE':
      return new ConnectorError('CONNECTION_FAILED', `${where(conn)} closed the connection unexpectedly`);
    default:
      break;
  }
  if (/^ERR_TLS_|CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_SSL|HOSTNAME/.test(sys)) {
    return new ConnectorError(
      'CONNECTION_FAILED',
      `TLS with ${where(conn)} failed: the server certificate was not accepted (${sys})`,
    );
  }
  const text = typeof e?.message === 'string' ? e.message : '';
  if (/^Timeout/i.test(text)) {
    return new ConnectorError('TIMEOUT', `${doing}: no answer from ${where(conn)} in time`);
  }
  if (/closed|disconnected|Client is closed/i.test(text)) {
    return new ConnectorError('CONNECTION_FAILED', `${doing}: the connection to ${where(conn)} was closed`);
  }
  return new ConnectorError('REMOTE_ERROR', `${doing} failed`);
}

/** Connects, upgrades to TLS when offered, logs in and enters base_path. */
export async function openFtp(conn: FtpConn, ctx: ConnectorContext): Promise<FtpSession> {
  const { config, credentials } = conn;
  if (!credentials)
    throw new ConnectorError('AUTHENTICATION_FAILED', 'the FTP data source has no credentials');
  const timeoutMs = config.connect_timeout * 1000;
  // basic-ftp's timeout is the idle time of a socket: a server that stops answering mid-way
  // fails the call instead of hanging it.
  const client = new Client(Math.max(timeoutMs, 30_000));
  let secure = false;
  const fail = (err: unknown, doing: string) => ftpError(err, conn, doing);
  const onAbort = () => client.close();
  ctx.signal?.addEventListener('abort', onAbort, { once: true });
  const close = () => {
    ctx.signal?.removeEventListener('abort', onAbort);
    client.close();
  };
  try {
    const target = await resolveAllowed(config.host, ctx.policy);
    const home = await withDeadline(
      (async () => {
        await client.connect(target.address, config.port);
        // Explicit FTPS whenever the server offers it: the spec's config has no TLS switch, so
        // a server that refuses AUTH TLS (a 5xx reply) gets a plain session.
        try {
          await client.useTLS(tlsOptions(config.host, target.address));
          secure = true;
        } catch (err) {
          if (!(err instanceof FTPError)) throw err;
        }
        await client.login(credentials.username, credentials.password);
        await client.useDefaultSettings();
        if (config.base_path) {
          try {
            await client.cd(config.base_path);
          } catch (err) {
            if (err instanceof FTPError) {
              throw new ConnectorError(
                'QUERY_FAILED',
                `base_path ${JSON.stringify(config.base_path)} is not a directory on the FTP server`,
              );
            }
            throw err;
          }
        }
        return client.pwd();
      })(),
      timeoutMs,
      () => client.close(),
      () =>
        new ConnectorError(
          'TIMEOUT',
          `no answer from ${where(conn)} within ${config.connect_timeout} seconds`,
        ),
    );
    client.prepareTransfer = guardedPassive(target.address, ctx);
    return { client, secure, home, fail, close, reopen: () => openFtp(conn, { ...ctx, signal: undefined }) };
  } catch (err) {
    close();
    throw fail(err, 'connecting');
  }
}
