import type { FastifyReply } from 'fastify';

// Headers every app-host response carries, errors included: the browser app loads only its own
// scripts (docs/app.md#backend-for-frontend-session-and-csrf: CSP script-src 'self'), is never
// framed (clickjacking), and responses are never sniffed into another type. Inline styles stay
// allowed for the built app (the DAG and virtual lists position by style attribute); the same
// policy as the app's files.

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

export function setSecurityHeaders(reply: FastifyReply) {
  reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
  reply.header('x-frame-options', 'DENY');
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'same-origin');
}
