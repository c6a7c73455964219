// Fails the build when the first screen's JavaScript (the entry chunk and every chunk it imports
// statically) exceeds the budget, gzipped. Lazy screens are not part of the first screen.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const BUDGET_KB = 250;
const dist = path.join(import.meta.dirname, '..', 'dist');
const html = fs.readFileSync(path.join(dist, 'index.html'), 'utf8');
const files = new Set();
for (const m of html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.js)"/g)) files.add(m[1]);
let total = 0;
for (const f of files) {
  const gz = zlib.gzipSync(fs.readFileSync(path.join(dist, f))).length;
  total += gz;
  console.log(`  ${f}: ${(gz / 1024).toFixed(1)} kB gz`);
}
const kb = total / 1024;
console.log(`first screen JavaScript: ${kb.toFixed(1)} kB gzipped (budget ${BUDGET_KB} kB)`);
fs.writeFileSync(
  path.join(dist, 'bundle-size.json'),
  JSON.stringify({ first_screen_gzip_kb: +kb.toFixed(1) }),
);
if (kb > BUDGET_KB) {
  console.error(`over budget by ${(kb - BUDGET_KB).toFixed(1)} kB`);
  process.exit(1);
}
