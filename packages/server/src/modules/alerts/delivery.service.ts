import type { DbOrTx } from '../../db/client';
import * as delivery from './delivery.repo';
import * as destinations from './destinations.repo';
import * as policies from './policies.repo';

// What the alert jobs (dispatch, delivery, destination test) use of the alerts tables, named here
// so the module's face exports no repository (docs/architecture.md#module-faces-and-boundaries).

/** The send decision for one (notification, destination): the gate row, claimed once. */
export function claimGate(...args: Parameters<typeof delivery.claimGate>) {
  return delivery.claimGate(...args);
}

/** Takes a slot in the destination's hourly window under its cap: whether allowed, and how many were held back. */
export function takeWindowSlot(tx: DbOrTx, destinationId: string, now: Date, cap: number) {
  return delivery.takeWindowSlot(tx, destinationId, now, cap);
}

export function insertAttempt(tx: DbOrTx, values: delivery.NewAttempt) {
  return delivery.insertAttempt(tx, values);
}

/** A delivery attempt by id (locked for the transaction when `lock`); null when gone. */
export function findAttempt(db: DbOrTx, id: string, lock = false) {
  return delivery.findAttempt(db, id, lock);
}

export function updateAttempt(...args: Parameters<typeof delivery.updateAttempt>) {
  return delivery.updateAttempt(...args);
}

export function findNotificationById(db: DbOrTx, id: string) {
  return delivery.findNotificationById(db, id);
}

export function findDestinationById(db: DbOrTx, id: string) {
  return destinations.findDestinationById(db, id);
}

/** Every alert destination of an organization. */
export function allDestinations(db: DbOrTx, organizationId: string) {
  return destinations.allDestinations(db, organizationId);
}

/** The organization's enabled alert policies with their destinations. */
export function enabledPolicies(db: DbOrTx, organizationId: string) {
  return policies.enabledPolicies(db, organizationId);
}
