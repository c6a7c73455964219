import * as delivery from './delivery.repo';
import * as destinations from './destinations.repo';
import * as policies from './policies.repo';

// What the alert jobs (dispatch, delivery, destination test) use of the alerts tables,
// named here so the module's face exports no repository (docs/architecture.md#module-faces-and-boundaries).

export const claimGate: typeof delivery.claimGate = (...args) => delivery.claimGate(...args);
export const takeWindowSlot: typeof delivery.takeWindowSlot = (...args) => delivery.takeWindowSlot(...args);
export const insertAttempt: typeof delivery.insertAttempt = (...args) => delivery.insertAttempt(...args);
export const findAttempt: typeof delivery.findAttempt = (...args) => delivery.findAttempt(...args);
export const updateAttempt: typeof delivery.updateAttempt = (...args) => delivery.updateAttempt(...args);
export const findNotificationById: typeof delivery.findNotificationById = (...args) =>
  delivery.findNotificationById(...args);
export const findDestinationById: typeof destinations.findDestinationById = (...args) =>
  destinations.findDestinationById(...args);
export const allDestinations: typeof destinations.allDestinations = (...args) =>
  destinations.allDestinations(...args);
export const enabledPolicies: typeof policies.enabledPolicies = (...args) =>
  policies.enabledPolicies(...args);
