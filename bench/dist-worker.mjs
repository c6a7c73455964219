// `sluice` from another compiled build of the CLI: BENCH_WORKER_DIST names a copy of
// packages/cli/dist (e.g. packages/cli/.dist-main, built from main) at the same depth, so its
// relative paths hold. bench:scale's A/B baseline (BENCH_SCALE_BASELINE) starts its workers so.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';

// As bin/sluice.mjs does before loading the build.
v8.setFlagsFromString('--semi-space-growth-factor=1');
await import(pathToFileURL(path.resolve(process.env.BENCH_WORKER_DIST ?? '', 'main.js')).href);
