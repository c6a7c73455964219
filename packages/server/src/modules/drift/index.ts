// The face of the drift module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { recordCapturedSchema } from './captured';
export { environmentsOfPipeline, refSchemas, specInEnvironment } from './drift.reads';
export { driftRoutes } from './drift.routes';
export { recordSourceSchemaReports } from './drift.service';
export { contractProblems, type Impact } from './impact';
export { sinkInputs } from './outputs';
export { computeReport, type ReportBody } from './report';
export { writeReport } from './report-writer';
export { type Change, maxSeverity, publicChange } from './schema-diff';
export { classifyPromiseChange, nameKey, normalizeType } from './schema-normalize';
export { targetsOfDataSource } from './targets';
