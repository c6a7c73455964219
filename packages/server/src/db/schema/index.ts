export * from './connections';
export * from './events';
export * from './identity';
export * from './oauth';
export * from './organizations';
export * from './pipelines';
export * from './proof';
