// The face of the data-sources module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { connectorsRoutes } from './connectors.routes';
export type { Failure, LoadedConnection } from './data-sources.connection';
export {
  capabilityFor,
  type DataSourceRow,
  describeFailure,
  findDataSource,
  loadConnection,
} from './data-sources.connection';
export type { CredentialRow } from './data-sources.repo';
export { dataSourcesRoutes } from './data-sources.routes';
export { dataSourceParams } from './data-sources.schemas';
export {
  dataSourceById,
  getRow,
  isCurrentCredentialOf,
  lockDataSourceById,
  requireDataSourceRow,
  src,
  writeDataSourceRow,
} from './data-sources.service';
export { oauthRoutes } from './oauth.routes';
