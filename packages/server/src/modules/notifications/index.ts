// The face of the notifications module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { type RaiseDeps, raiseNotification, resolveNotification } from './notifications.raise';
export type { NotificationRow } from './notifications.repo';
export { notificationsRoutes } from './notifications.routes';
export {
  entityTypeSchema,
  eventActionSchema,
  lifecycleStateSchema,
  notificationParams,
  notificationTypeSchema,
  severitySchema,
} from './notifications.schemas';
export { requireNotificationRow } from './notifications.service';
export {
  alertCredentialFailed,
  alertRunEnded,
  alertSchemaImport,
  alertTriggerFailed,
  resolveConnectionAlerts,
  resolveCredentialFailed,
  resolveTriggerFailed,
  runAlertOpenSql,
} from './source-alerts';
