// The face of the alerts module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { moreSpecific, policyMatches } from './alert-matching';
export { attemptMessageId, buildAlertMessage, mailDomain, threadRoot } from './alert-message';
export { attemptsRoutes } from './attempts.routes';
export {
  allDestinations,
  claimGate,
  enabledPolicies,
  findAttempt,
  findDestinationById,
  findNotificationById,
  insertAttempt,
  takeWindowSlot,
  updateAttempt,
} from './delivery.service';
export { failureMessage, providerMetadata } from './delivery-metadata';
export { destinationsRoutes } from './destinations.routes';
export type { PolicyWithDestinations } from './policies.repo';
export { policiesRoutes } from './policies.routes';
