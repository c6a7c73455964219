// Refreshes test/support/file-durations.json from the durations vitest recorded in its cache
// (node_modules/.vite/vitest/*/results.json) during the last full `npm test` on this machine.
// The table only orders the files of a clean clone, which has no cache: the longest start first
// (test/support/sequencer.ts), so no long file is left to run alone at the end of a project.
import fs from 'node:fs';
import path from 'node:path';

// `npm test` runs in lanes (scripts/test.mjs), each with its own cache under
// node_modules/.vite/lane-N; a plain `vitest run` uses node_modules/.vite.
const viteRoot = 'node_modules/.vite';
const cacheRoots = fs.existsSync(viteRoot)
  ? [viteRoot, ...fs.readdirSync(viteRoot).map((d) => path.join(viteRoot, d))].map((d) =>
      path.join(d, 'vitest'),
    )
  : [];
const tables = cacheRoots
  .filter((d) => fs.existsSync(d))
  .flatMap((d) => fs.readdirSync(d).map((h) => path.join(d, h, 'results.json')));
const found = tables.filter((f) => fs.existsSync(f));
if (found.length === 0) {
  console.error('no vitest cache here: run `npm test` first');
  process.exit(1);
}
const seconds = {};
for (const file of found) {
  const { results } = JSON.parse(fs.readFileSync(file, 'utf8'));
  // `results` is a list of [key, { duration, failed }] pairs, the key `project:path`.
  for (const [key, r] of results) {
    if (typeof r?.duration === 'number') seconds[key] = Math.max(1, Math.round(r.duration / 1000));
  }
}
const sorted = Object.fromEntries(
  Object.entries(seconds).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)),
);
fs.writeFileSync('test/support/file-durations.json', `${JSON.stringify(sorted, null, 1)}\n`);
console.log(`wrote test/support/file-durations.json (${Object.keys(sorted).length} files)`);
