import * as lease from './run-lease.repo';
import * as runLogs from './run-logs.repo';
import * as progress from './run-progress.repo';
import * as sources from './run-sources.repo';
import * as runs from './runs.repo';

// What the run worker (the run_pipeline job) and the run log stream use of the runs tables,
// named here so the module's face exports no repository (docs/architecture.md#module-faces-and-boundaries).

/** Takes a queued run for this worker; null when another worker took it or it is gone. */
export const claimRun: typeof lease.claimRun = (...args) => lease.claimRun(...args);
/** The statement a pipelines.run fetch runs to claim the runs of the jobs it took. */
export const claimRunsOfJobsSql: typeof lease.claimRunsOfJobsSql = (...args) =>
  lease.claimRunsOfJobsSql(...args);
/** The bound data sources the claim read, from its JSON. */
export const boundFromJson: typeof sources.boundFromJson = (...args) => sources.boundFromJson(...args);
/** Extends the worker's lease on its run and reports the run's state and cancel request. */
export const renewLease: typeof lease.renewLease = (...args) => lease.renewLease(...args);
export const updateSteps: typeof progress.updateSteps = (...args) => progress.updateSteps(...args);
export const insertLogs: typeof progress.insertLogs = (...args) => progress.insertLogs(...args);
export const checkpointCursors: typeof progress.checkpointCursors = (...args) =>
  progress.checkpointCursors(...args);
export const versionSpec: typeof sources.versionSpec = (...args) => sources.versionSpec(...args);
export const boundDataSources: typeof sources.boundDataSources = (...args) =>
  sources.boundDataSources(...args);
export const findRunInput: typeof runs.findRunInput = (...args) => runs.findRunInput(...args);
/** The log page cursor that follows a given sequence number. */
export const logCursorAfter: typeof runLogs.logCursorAfter = (...args) => runLogs.logCursorAfter(...args);
