// The face of the cdc module (docs/cdc.md): what other modules and jobs may use.
export { CAPTURE_PREFIX, captureName } from './capture-name';
