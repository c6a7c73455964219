// The face of the runs module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { sealRunInput } from './run-execute.service';
export type { RunRecord } from './runs.repo';
export { runsRoutes } from './runs.routes';
export { INPUT_KEY, pipelineParams } from './runs.schemas';
