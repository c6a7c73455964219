// The face of the members module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { membersRoutes } from './members.routes';
export { addMemberUnlessPresent, assertMayGrant, memberByEmail } from './members.service';
