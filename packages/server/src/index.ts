import type { App } from './app';
import type { Deps } from './context';

export type { App } from './app';
export type { Deps, Principal, Scope } from './context';

// The HTTP hosts load on first use: a worker process never needs the routes and their schemas.
export async function buildApp(deps: Deps): Promise<App> {
  return (await import('./app')).buildApp(deps);
}
/** The app host; `api` (the API host of the same process) answers its /api mount (app-host/bff.ts). */
export async function buildAppHost(deps: Deps, opts: { api?: App } = {}) {
  return (await import('./app-host/app-host')).buildAppHost(deps, opts);
}

export { type RotationReport, rotateKeys } from './crypto/rotate';
export { openStore, type Store } from './db/client';
export { DataDirLockedError } from './db/lock';
export { migrate } from './db/migrate';
export { DataDirVersionError } from './db/pglite';
export { type Config, ConfigError, loadConfig, parseConfig } from './env';
export { emailSchema, slugSchema } from './http/fields';
export type { WarmStart } from './jobs/warm-start';
export { startWorker } from './jobs/worker';
export { setUserPassword, UnknownUserError } from './modules/identity/index';
export { rotateSigningKey } from './modules/proof/index';
export {
  AlreadyBootstrappedError,
  type BootstrapResult,
  bootstrap,
  issueSetupCode,
  setupCodePath,
} from './modules/system/index';

export { openRuntime, type Runtime, type Server, startApi } from './runtime';
