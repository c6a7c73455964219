// The face of the identity module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { identityRoutes } from './identity.routes';
export { type Me, meOf } from './me';
export { NO_PASSWORD } from './passwords';
export { resolvePrincipal } from './principal';
export { setUserPassword, UnknownUserError } from './set-password';
export { recordAccountEvent } from './user-events';
export { passwordSchema } from './users.schemas';
