#!/usr/bin/env node
// The CLI runs its TypeScript sources directly; tsx is a runtime dependency of @sluice/cli so
// `npm ci --omit=dev` still yields a working `sluice`.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
