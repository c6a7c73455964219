// The face of the triggers module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { tick } from './trigger-tick';
export { triggersRoutes } from './triggers.routes';
export { webhooksRoutes } from './webhooks.routes';
