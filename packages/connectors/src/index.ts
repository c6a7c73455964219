export * from './egress';
export * from './registry';
export * from './types';
