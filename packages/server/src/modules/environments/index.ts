// The face of the environments module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { type EnvironmentRow, environmentKeyOf, environmentSortColumns } from './environment-sort';
export { environmentsRoutes } from './environments.routes';
export {
  environmentParams,
  environmentSchema,
  environmentSorts,
  runtimeKeySchema,
} from './environments.schemas';
export {
  eventSource,
  findLiveEnvironment,
  lockEnvironmentRow,
  lockLiveEnvironment,
  requireEnvironment,
  toEnvironment,
} from './environments.service';
export {
  assertProtectedConfirmation,
  confirmationField,
  confirmationOf,
  confirmationQuery,
} from './protected';
