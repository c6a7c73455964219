export * from './connections';
export * from './events';
export * from './identity';
export * from './organizations';
export * from './pipelines';
