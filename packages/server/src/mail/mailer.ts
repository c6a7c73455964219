import nodemailer from 'nodemailer';
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

/** SMTP when configured; otherwise mail goes to the log so a fresh install still works. */
export function createMailer(opts: { smtpUrl?: string; from: string; log: Logger }): Mailer {
  if (!opts.smtpUrl) {
    return {
      async send(mail) {
        opts.log.info(
          { mail: { to: mail.to, subject: mail.subject, text: mail.text } },
          'mail (no SMTP configured)',
        );
      },
      close() {},
    };
  }
  const transport = nodemailer.createTransport(smtpTransportOptions(opts.smtpUrl));
  return {
    async send(mail) {
      await transport.sendMail({ from: opts.from, to: mail.to, subject: mail.subject, text: mail.text });
    },
    close() {
      transport.close();
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
