// The face of the identity module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { identityRoutes } from './identity.routes';
export { type Me, meOf } from './me';
export { checkPassword, NO_PASSWORD } from './passwords';
export { createPatBody, patWithTokenSchema } from './pats.schemas';
export { createPat } from './pats.service';
export { resolvePrincipal } from './principal';
export {
  deleteSession,
  findActiveSession,
  findUserByEmail,
  insertSession,
  sessionStanding,
  touchSession,
} from './sessions.service';
export { setUserPassword, UnknownUserError } from './set-password';
export { recordAccountEvent } from './user-events';
export { passwordSchema, userSchema } from './users.schemas';
export { toUser } from './users.service';
