import type { Config } from '../env';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function placeholderPage(config: Config): string {
  const api = `http://${config.api.host}:${config.api.port}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sluice</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#1d2733}
code{background:#f1f4f8;padding:.1rem .3rem;border-radius:3px}</style></head>
<body><h1>Sluice</h1>
<p>The browser app is on its way. Everything it will do is available now through the JSON API at
<code>${escape(api)}</code> (<a href="${escape(api)}/openapi.json">OpenAPI document</a>) and the
<code>sluice</code> command line.</p></body></html>`;
}
