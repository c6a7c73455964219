// A real SMTP server (npm `smtp-server`) on an ephemeral loopback port, so mail
// delivery is tested over the wire instead of against a mocked transport.
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerError } from 'smtp-server';
import { parseMail } from './mail-parse';

export type CapturedMail = {
  /** From/To come from the message headers, as a recipient would see them. */
  from: string;
  to: string[];
  subject: string;
  /** Decoded text/plain body (quoted-printable/base64 undone, CRLF -> LF). */
  text: string;
  raw: string;
  /** What the client said in MAIL FROM / RCPT TO; includes Bcc recipients. */
  envelope: { from: string; to: string[] };
};

export type SmtpPeerOptions = {
  user?: string;
  password?: string;
  /** Enables STARTTLS with this key/cert; without it the peer is plaintext only. */
  tls?: { key: string | Buffer; cert: string | Buffer };
};

export type SmtpPeer = {
  /** smtp://user:pass@127.0.0.1:PORT */
  url: string;
  port: number;
  /** Accepted mails in arrival order; cleared in place so references stay valid. */
  messages: CapturedMail[];
  waitFor(predicate?: (mail: CapturedMail) => boolean, timeoutMs?: number): Promise<CapturedMail>;
  /** Answer the next n DATA transactions with `code` (4xx = transient, 5xx = permanent). */
  failNext(n: number, code?: number): void;
  /** Refuse these recipients at RCPT TO with `code` (others are still accepted). */
  refuseRecipients(addresses: string[], code?: number): void;
  /** Answer the next n AUTH commands with 535 (credentials refused). */
  failAuthNext(n: number): void;
  /** Forget captured mail, pending failNext/failAuthNext and refused recipients. */
  clear(): void;
  close(): Promise<void>;
};

type Waiter = { predicate: (mail: CapturedMail) => boolean; resolve: (mail: CapturedMail) => void };

export async function startSmtpPeer(opts: SmtpPeerOptions = {}): Promise<SmtpPeer> {
  const user = opts.user ?? 'user';
  const password = opts.password ?? 'pass';
  const messages: CapturedMail[] = [];
  const waiters = new Set<Waiter>();
  let failures: { remaining: number; code: number } = { remaining: 0, code: 451 };
  let authFailures = 0;
  let refused: { addresses: Set<string>; code: number } = { addresses: new Set(), code: 550 };

  const server = new SMTPServer({
    logger: false,
    // Loopback only, so plaintext AUTH is acceptable and mirrors a relay without TLS.
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    disabledCommands: opts.tls ? [] : ['STARTTLS'],
    ...(opts.tls ? { key: opts.tls.key, cert: opts.tls.cert } : {}),
    // Pending connections must not keep close() hanging for the 30s default.
    closeTimeout: 1000,
    onAuth(auth, _session, callback) {
      if (authFailures > 0) {
        authFailures--;
        const err: SMTPServerError = new Error('Authentication credentials invalid');
        err.responseCode = 535;
        return callback(err);
      }
      if (auth.username === user && auth.password === password) return callback(null, { user });
      const err: SMTPServerError = new Error('Invalid username or password');
      err.responseCode = 535;
      callback(err);
    },
    onRcptTo(address, _session, callback) {
      if (refused.addresses.has(address.address.toLowerCase())) {
        const err: SMTPServerError = new Error(`5.1.1 <${address.address}>: Recipient address rejected`);
        err.responseCode = refused.code;
        return callback(err);
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      // The stream must be drained even when failing, or the session stalls.
      stream.on('end', () => {
        if (failures.remaining > 0) {
          failures.remaining--;
          const err: SMTPServerError = new Error(`Simulated failure ${failures.code}`);
          err.responseCode = failures.code;
          return callback(err);
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        const parsed = parseMail(raw);
        const mailFrom = session.envelope.mailFrom;
        const mail: CapturedMail = {
          from: parsed.from,
          to: parsed.to,
          subject: parsed.subject,
          text: parsed.text,
          raw,
          envelope: {
            from: mailFrom ? mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
          },
        };
        messages.push(mail);
        for (const waiter of waiters) {
          if (waiter.predicate(mail)) {
            waiters.delete(waiter);
            waiter.resolve(mail);
          }
        }
        callback(null, 'OK: captured');
      });
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Swallow late socket errors (clients dropping mid-session) instead of crashing the test run.
  server.on('error', () => {});
  const port = (server.server.address() as AddressInfo).port;

  return {
    url: `smtp://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}`,
    port,
    messages,
    waitFor(predicate = () => true, timeoutMs = 10_000) {
      const existing = messages.find(predicate);
      if (existing) return Promise.resolve(existing);
      return new Promise<CapturedMail>((resolve, reject) => {
        const waiter: Waiter = {
          predicate,
          resolve: (mail) => {
            clearTimeout(timer);
            resolve(mail);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`No matching mail within ${timeoutMs}ms (captured ${messages.length})`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    failNext(n, code = 451) {
      if (code < 400 || code > 599) throw new Error(`failNext code must be 4xx/5xx, got ${code}`);
      failures = { remaining: n, code };
    },
    refuseRecipients(addresses, code = 550) {
      refused = { addresses: new Set(addresses.map((a) => a.toLowerCase())), code };
    },
    failAuthNext(n) {
      authFailures = n;
    },
    clear() {
      messages.length = 0;
      failures = { remaining: 0, code: 451 };
      authFailures = 0;
      refused = { addresses: new Set(), code: 550 };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
