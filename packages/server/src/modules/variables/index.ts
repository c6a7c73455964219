// The face of the variables module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { variablesRoutes } from './variables.routes';
export { resolveVariables } from './variables.service';
