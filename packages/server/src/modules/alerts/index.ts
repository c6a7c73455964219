// The face of the alerts module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { attemptsRoutes } from './attempts.routes';
export { destinationsRoutes } from './destinations.routes';
export { policiesRoutes } from './policies.routes';
