// The face of the system module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { AlreadyBootstrappedError, type BootstrapResult, bootstrap } from './bootstrap';
export { setupRoutes } from './setup.routes';
export { issueSetupCode, setupCodePath } from './setup-code';
