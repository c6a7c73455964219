import type { Config } from '../env';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Shown only when packages/web has not been built (npm install builds it). */
export function placeholderPage(config: Config): string {
  const api = `http://${config.api.host}:${config.api.port}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sluice</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><h1>Sluice</h1>
<p>The browser app has not been built: run <code>npm run build -w @sluice/web</code> (or
<code>npm install</code>) and reload. The JSON API is at <code>${escapeHtml(api)}</code>
(<a href="${escapeHtml(api)}/openapi.json">OpenAPI document</a>).</p></body></html>`;
}
