export * from './canonical-json';
export * from './executor';
export * from './payloads';
export * from './plan';
export * from './ports';
export { csvRecords, rowsOf } from './rows-of';
export { masker } from './run-error';
export * from './spec';
export * from './templates';
export { duckType, loadTransforms } from './transform';
export { exerciseTransforms } from './transform-exercise';
export { serveTransforms } from './transform-host';
export {
  type StartHost,
  type TransformHost,
  type Transforms,
  transformHost,
} from './transform-remote';
