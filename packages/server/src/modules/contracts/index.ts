// The face of the contracts module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { contractFindings } from './contract-validation';
export { contractsRoutes } from './contracts.routes';
export { latestRevisionOf } from './contracts.service';
export { withContractChecks } from './run-quality';
