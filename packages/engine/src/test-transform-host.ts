import { serveTransforms } from './transform-host';

// A transform host for the engine's tests (transform.test.ts, transform-remote.test.ts), started
// with tsx: what `sluice transform-host` runs in a `sluice serve` on the embedded store.
await serveTransforms();
process.exit(0);
