// The face of the queries module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { queriesRoutes } from './queries.routes';
