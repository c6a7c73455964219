export * from './capabilities';
export * from './egress';
export { readServedJson } from './http/index';
export * from './registry';
export * from './session-pool';
export * from './types';
