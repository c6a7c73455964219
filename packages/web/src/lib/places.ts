// The places of the app: the sidebar lists them and the command palette jumps to them.
// A new screen of its own joins one of these lists.

export const mainPlaces = [
  { to: '/o/$org/runs', label: 'Runs' },
  { to: '/o/$org/pipelines', label: 'Pipelines' },
  { to: '/o/$org/data-sources', label: 'Data sources' },
  { to: '/o/$org/queries', label: 'Queries' },
  { to: '/o/$org/events', label: 'Events' },
  { to: '/o/$org/audit', label: 'Security audit' },
  { to: '/o/$org/notifications', label: 'Alerts' },
  { to: '/o/$org/alerts/policies', label: 'Alert policies' },
  { to: '/o/$org/alerts/destinations', label: 'Alert destinations' },
  { to: '/o/$org/alerts/attempts', label: 'Delivery attempts' },
  { to: '/o/$org/triggers', label: 'Triggers' },
  { to: '/o/$org/drift', label: 'Drift reports' },
  { to: '/o/$org/contracts', label: 'Contracts' },
] as const;

export const settingsSections = [
  ['api-keys', 'API keys'],
  ['members', 'Members'],
  ['invitations', 'Invitations'],
  ['roles', 'Roles'],
  ['environments', 'Environments'],
  ['secrets', 'Secrets'],
  ['billing', 'Billing'],
] as const;
