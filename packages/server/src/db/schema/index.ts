export * from './connections';
export * from './drift';
export * from './events';
export * from './identity';
export * from './oauth';
export * from './organizations';
export * from './pipelines';
