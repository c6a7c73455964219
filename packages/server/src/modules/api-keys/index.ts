// The face of the api-keys module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { apiKeysRoutes } from './api-keys.routes';
