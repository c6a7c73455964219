import type { SendOutcome } from '../../mail/alert-transport';

// provider_response_metadata is an allowlist (docs/alerting.md#delivery-attempts-and-retries): only
// these keys, built here from what the transport reported, never the raw reply object, credentials
// or bodies.

const TOKENISH = /[A-Za-z0-9+/=_-]{20,}/g;

/** First line, token-like strings removed, at most 300 characters. */
export function sanitizeSmtpResponse(response: string | undefined): string | undefined {
  if (!response) return undefined;
  const first = response.split(/\r?\n/)[0] ?? '';
  return first.replace(TOKENISH, '[redacted]').slice(0, 300);
}

function enhancedStatus(response: string | undefined): string | undefined {
  const m = response?.match(/^\d{3}[ -](\d\.\d{1,3}\.\d{1,3})\b/);
  return m?.[1];
}

export function providerMetadata(
  outcome: SendOutcome,
  messageId: string,
  nextRetryAt: Date | null,
): Record<string, unknown> {
  const md: Record<string, unknown> = {
    transport: outcome.ok && outcome.transport === 'log' ? 'log' : 'smtp',
    message_id: messageId,
    duration_ms: outcome.durationMs,
  };
  if (outcome.responseCode !== undefined) md.smtp_response_code = outcome.responseCode;
  const es = enhancedStatus(outcome.response);
  if (es) md.enhanced_status = es;
  const r = sanitizeSmtpResponse(outcome.response);
  if (r) md.smtp_response = r;
  if (outcome.ok) {
    md.accepted_count = outcome.accepted.length;
    md.rejected_count = outcome.rejected.length;
    if (outcome.rejected.length > 0) md.rejected_recipients = outcome.rejected;
  } else {
    md.failure_class = outcome.failureClass;
    if (outcome.command)
      md.smtp_command = outcome.command.split(' ')[0] === 'AUTH' ? 'AUTH' : outcome.command.slice(0, 40);
    md.rejected_count = outcome.rejected.length;
    if (outcome.rejected.length > 0) md.rejected_recipients = outcome.rejected;
    if (nextRetryAt) md.next_retry_at = nextRetryAt.toISOString();
  }
  return md;
}

/** A sanitized one-line reason: never the transport's own message (it can echo the exchange). */
export function failureMessage(outcome: Extract<SendOutcome, { ok: false }>): string {
  const what =
    outcome.failureClass === 'authentication'
      ? 'the SMTP server refused the credentials'
      : outcome.failureClass === 'tls'
        ? 'the TLS handshake with the SMTP server failed'
        : outcome.failureClass === 'configuration'
          ? 'the message or its recipients were refused'
          : outcome.responseCode
            ? 'the SMTP server refused the message'
            : 'the SMTP server could not be reached';
  const code = outcome.responseCode
    ? ` (${outcome.responseCode}${outcome.command ? ` on ${outcome.command.split(' ')[0]}` : ''})`
    : outcome.code
      ? ` (${outcome.code})`
      : '';
  return `${what}${code}`;
}
