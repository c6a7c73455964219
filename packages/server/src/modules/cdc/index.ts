// The face of the cdc module (docs/cdc.md): what other modules and jobs may use.
export { CAPTURE_PREFIX, captureName } from './capture-name';
export { capturesRoutes } from './captures.routes';
export { type CheckResult, checkCaptures } from './lag-check.service';
export { RELEASE_JOB, type ReleaseRequest, releaseCapture, retireCaptures } from './release.service';
