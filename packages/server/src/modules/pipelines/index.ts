// The face of the pipelines module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { bindingsRoutes } from './bindings.routes';
export { deploymentsRoutes } from './deployments.routes';
export { deployedRunPath, deployedSpecs, findActiveDeployment } from './deployments.service';
export { pipelinesRoutes } from './pipelines.routes';
export { pipelineParams } from './pipelines.schemas';
export {
  eventSource,
  lockPipelineOf,
  lockPlace,
  requirePipeline,
  requirePlace,
  requireProject,
} from './pipelines.service';
export { refsRoutes } from './refs.routes';
export { withoutTemplates } from './sql-check';
export { validationsRoutes } from './validations.routes';
export { versionsRoutes } from './versions.routes';
export { resolveVersion } from './versions.service';
