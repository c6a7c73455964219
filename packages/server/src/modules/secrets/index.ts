// The face of the secrets module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { resolveSecrets, secretKeys } from './secrets.resolve';
export { secretsRoutes } from './secrets.routes';
