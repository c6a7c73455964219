// The face of the events module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export {
  type EntityType,
  type EventAction,
  type EventInput,
  entityTypes,
  eventActions,
  eventFromRowSql,
  recordEvent,
  recordPermissionDenial,
} from './events.record';
export { eventsRoutes } from './events.routes';
