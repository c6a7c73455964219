import type { FastifyReply } from 'fastify';

// Headers every app-host response carries, errors included: the browser app loads only its own
// scripts (DECISIONS.md §15: CSP script-src 'self'), is never framed (clickjacking), and
// responses are never sniffed into another type. Inline styles stay allowed for the built app.

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export function setSecurityHeaders(reply: FastifyReply) {
  reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
  reply.header('x-frame-options', 'DENY');
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'same-origin');
}
