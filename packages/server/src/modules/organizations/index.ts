// The face of the organizations module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { organizationsRoutes } from './organizations.routes';
export { lockOrganizationFor } from './organizations.service';
export { resolveScope } from './scope';
