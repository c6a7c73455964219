// The face of the roles module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { knownPermissions, permissionsOfRole } from './role-permissions';
export { rolesRoutes } from './roles.routes';
