import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import { CONTROL_CHARACTERS } from '../http/fields';

const CONTROL_ALL = new RegExp(CONTROL_CHARACTERS.source, 'g');

/**
 * A stored value (a name, a title) put into one line of a mail: control characters and line
 * breaks become spaces, so a name stored before names refused them cannot add lines of its own.
 */
export const oneLine = (value: string) => value.replace(CONTROL_ALL, ' ');

export type Mail = { to: string; subject: string; text: string };
export type Mailer = { send(mail: Mail): Promise<void>; close(): void };

/** The message of every mail written to the log, so operators can find them all with one grep. */
export const LOGGED_MAIL_MESSAGE = 'mail (no SMTP configured: SLUICE_SMTP_URL is unset)';

/**
 * Without SMTP every mail (verification, invitation, alert) is one structured log line:
 * recipients, subject and text (docs/operations.md "Mail"). The text is what the recipient
 * needs; no caller puts a password or an API key in it. Verification and invitation links hold
 * their single-use token, since the log is then the only way to deliver it.
 */
export function logMail(log: Logger, mail: { to: string | string[]; subject: string; text: string }) {
  log.info(
    { mail: { to: Array.isArray(mail.to) ? mail.to : [mail.to], subject: mail.subject, text: mail.text } },
    LOGGED_MAIL_MESSAGE,
  );
}

/** SMTP when configured; otherwise mail goes to the log so a fresh install still works. */
export function createMailer(opts: { smtpUrl?: string; from: string; log: Logger }): Mailer {
  if (!opts.smtpUrl) {
    return {
      async send(mail) {
        logMail(opts.log, mail);
      },
      close() {},
    };
  }
  const smtpUrl = opts.smtpUrl;
  // nodemailer loads with the first mail: most processes send none (docs/benchmarks.md, Memory).
  let transport: Promise<Transporter> | null = null;
  return {
    async send(mail) {
      transport ??= import('nodemailer').then((m) =>
        m.default.createTransport(smtpTransportOptions(smtpUrl)),
      );
      await (await transport).sendMail({
        from: opts.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
      });
    },
    close() {
      transport?.then((t) => t.close()).catch(() => {});
    },
  };
}

/** nodemailer options for `SLUICE_SMTP_URL` (smtp:// or smtps://, credentials in the URL). */
export function smtpTransportOptions(smtpUrl: string) {
  const url = new URL(smtpUrl);
  return {
    host: url.hostname,
    port: Number(url.port || (url.protocol === 'smtps:' ? 465 : 587)),
    secure: url.protocol === 'smtps:',
    auth: url.username
      ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }
      : undefined,
    // Loopback SMTP relays in development commonly have no certificate.
    ignoreTLS: url.searchParams.get('tls') === 'off',
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  };
}
