import { smtpTransportOptions } from './mailer';

// Alert mail needs what the plain mailer hides: per-recipient acceptance, SMTP reply codes and
// the command answered, so each try can be classified and recorded (docs/alerting.md).

export type AlertMail = {
  to: string[];
  subject: string;
  text: string;
  html: string;
  /** Stable per attempt; `<…>` form. */
  messageId: string;
  /** Thread root of the notification. */
  references: string;
};

export type FailureClass = 'transient' | 'permanent' | 'authentication' | 'tls' | 'configuration';

export type SendOutcome =
  | {
      ok: true;
      /** `log`: no SMTP server is configured and the message was written to the log. */
      transport?: 'smtp' | 'log';
      accepted: string[];
      rejected: string[];
      responseCode?: number;
      response?: string;
      durationMs: number;
    }
  | {
      ok: false;
      failureClass: FailureClass;
      retryable: boolean;
      code?: string;
      responseCode?: number;
      command?: string;
      response?: string;
      rejected: string[];
      durationMs: number;
    };

const TRANSIENT_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'EMAXLIMIT', 'ECONNRESET']);

/** Transient: connection trouble, timeouts and any SMTP 4xx; permanent: 5xx, auth, TLS, config. */
export function classify(err: { code?: string; responseCode?: number }): {
  failureClass: FailureClass;
  retryable: boolean;
} {
  const rc = err.responseCode;
  if (err.code === 'EAUTH' || rc === 535 || rc === 534 || rc === 530)
    return { failureClass: 'authentication', retryable: false };
  if (rc !== undefined && rc >= 400 && rc < 500) return { failureClass: 'transient', retryable: true };
  if (rc !== undefined && rc >= 500) return { failureClass: 'permanent', retryable: false };
  if (err.code === 'ETLS') return { failureClass: 'tls', retryable: false };
  if (err.code === 'ECONFIG' || err.code === 'EENVELOPE' || err.code === 'EMESSAGE')
    return { failureClass: 'configuration', retryable: false };
  if (err.code && TRANSIENT_CODES.has(err.code)) return { failureClass: 'transient', retryable: true };
  // Unknown errors are retried: a lost mail is worse than a late one.
  return { failureClass: 'transient', retryable: true };
}

export async function sendAlertMail(smtpUrl: string, from: string, mail: AlertMail): Promise<SendOutcome> {
  const { default: nodemailer } = await import('nodemailer');
  const transport = nodemailer.createTransport({ ...smtpTransportOptions(smtpUrl), socketTimeout: 30_000 });
  const started = Date.now();
  try {
    const info = await transport.sendMail({
      from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      messageId: mail.messageId,
      inReplyTo: mail.references,
      references: mail.references,
    });
    const response = typeof info.response === 'string' ? info.response : undefined;
    return {
      ok: true,
      accepted: (info.accepted ?? []).map(String),
      rejected: (info.rejected ?? []).map(String),
      responseCode: response ? Number(response.slice(0, 3)) || undefined : undefined,
      response,
      durationMs: Date.now() - started,
    };
  } catch (e) {
    const err = e as {
      code?: string;
      responseCode?: number;
      command?: string;
      response?: string;
      rejected?: unknown[];
    };
    return {
      ok: false,
      ...classify(err),
      code: err.code,
      responseCode: err.responseCode,
      command: err.command,
      response: err.response,
      rejected: (err.rejected ?? []).map(String),
      durationMs: Date.now() - started,
    };
  } finally {
    transport.close();
  }
}
