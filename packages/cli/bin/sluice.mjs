#!/usr/bin/env node
// The CLI runs its TypeScript sources directly; tsx is a runtime dependency of @sluice/cli so
// `npm ci --omit=dev` still yields a working `sluice`. When `npm install` has compiled them
// (scripts/build.mjs, run by the root `prepare`) and no source changed since, the compiled
// build runs instead: same code, without the TypeScript loader's memory (docs/benchmarks.md).
import v8 from 'node:v8';
import { compiledBuildIsFresh } from './fresh.mjs';

// Start-up (loading modules, opening the store) allocates a lot that survives only briefly, and
// V8 answers by doubling its young generation up to 32 MB, which it then keeps for the life of
// the process. Held at its initial 2 MB until the process is ready (long-running commands
// restore V8's default growth then, see src/startup.ts): `sluice serve` idles ~20 MB smaller
// (docs/benchmarks.md, Memory).
v8.setFlagsFromString('--semi-space-growth-factor=1');

const cliDir = new URL('../', import.meta.url);
if (process.env.SLUICE_RUN_SOURCES !== '1' && compiledBuildIsFresh(cliDir)) {
  await import(new URL('dist/main.js', cliDir).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/run.ts');
}
