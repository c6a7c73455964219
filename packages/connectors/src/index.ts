export * from './capabilities';
export * from './egress';
export * from './registry';
export * from './session-pool';
export * from './types';
