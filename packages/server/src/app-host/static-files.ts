import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../env';
import { notFound } from '../http/errors';
import { placeholderPage } from './placeholder-page';

// `npm install` builds packages/web into dist/ (the root prepare script); the server serves it.
export const webDistDir = fileURLToPath(new URL('../../../web/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

// Inline styles stay allowed for the DAG and virtual lists, which position nodes by style
// attribute; scripts only from this origin, never eval.
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/** The built app: hashed assets cached for good, every other GET answered by index.html. */
export function serveWebApp(app: FastifyInstance, config: Config, distDir = webDistDir) {
  app.addHook('onSend', async (_req, reply) => {
    reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'same-origin');
  });
  const indexFile = path.join(distDir, 'index.html');
  const assetsDir = path.join(distDir, 'assets');

  app.get('/assets/*', { config: { rateLimit: false } }, async (req, reply) => {
    const rel = (req.params as { '*': string })['*'];
    const file = path.resolve(assetsDir, rel);
    if (!file.startsWith(assetsDir + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      throw notFound('asset');
    }
    reply.header('cache-control', 'public, max-age=31536000, immutable');
    return reply
      .type(TYPES[path.extname(file)] ?? 'application/octet-stream')
      .send(fs.createReadStream(file));
  });

  app.get('/*', { config: { rateLimit: false } }, async (req, reply) => {
    if (req.url.startsWith('/api/')) throw notFound('route');
    reply.header('cache-control', 'no-cache');
    reply.type('text/html; charset=utf-8');
    if (!fs.existsSync(indexFile)) return reply.send(placeholderPage(config));
    return reply.send(fs.createReadStream(indexFile));
  });
}
