// The face of the runs module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { runInputBinding, sealRunInput } from './run-execute.service';
export type { ClaimedRun, ClaimedWithHints, ClaimHints } from './run-lease.repo';
export { finishRun, type RunOutcome, recoverExpiredRuns, runEndStatement } from './run-lifecycle.service';
export type { LogLine, StepUpdate } from './run-progress.repo';
export {
  boundDataSources,
  boundFromJson,
  checkpointCursors,
  claimRun,
  claimRunsOfJobsSql,
  findRunInput,
  insertLogs,
  logCursorAfter,
  renewLease,
  updateSteps,
  versionSpec,
} from './run-worker.service';
export type { RunRecord } from './runs.repo';
export { runsRoutes } from './runs.routes';
export {
  envParams,
  INPUT_KEY,
  pipelineParams,
  type RunState,
  runParams,
  runStates,
  terminalRunStates,
} from './runs.schemas';
export { getRun, listLogs, listRuns } from './runs.service';
