import * as sessions from './sessions.repo';
import * as users from './users.repo';

// What the browser host's sign-in and event streams use of the sessions and users tables,
// named here so the module's face exports no repository (docs/architecture.md#module-faces-and-boundaries).

export const insertSession: typeof sessions.insertSession = (...args) => sessions.insertSession(...args);
export const findActiveSession: typeof sessions.findActiveSession = (...args) =>
  sessions.findActiveSession(...args);
export const touchSession: typeof sessions.touchSession = (...args) => sessions.touchSession(...args);
export const deleteSession: typeof sessions.deleteSession = (...args) => sessions.deleteSession(...args);
/** Whether a session still exists and whether it has expired; null when gone. */
export const sessionStanding: typeof sessions.sessionStanding = (...args) =>
  sessions.sessionStanding(...args);
export const findUserByEmail: typeof users.findUserByEmail = (...args) => users.findUserByEmail(...args);
