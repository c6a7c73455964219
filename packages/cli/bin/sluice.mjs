#!/usr/bin/env node
// The CLI runs its TypeScript sources directly; tsx is a runtime dependency of @sluice/cli so
// `npm ci --omit=dev` still yields a working `sluice`. When `npm install` has compiled them
// (scripts/build.mjs, run by the root `prepare`) and no source changed since, the compiled
// build runs instead: same code, without the TypeScript loader's memory (docs/benchmarks.md).
import { compiledBuildIsFresh } from './fresh.mjs';

const cliDir = new URL('../', import.meta.url);
if (process.env.SLUICE_RUN_SOURCES !== '1' && compiledBuildIsFresh(cliDir)) {
  await import(new URL('dist/main.js', cliDir).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/run.ts');
}
