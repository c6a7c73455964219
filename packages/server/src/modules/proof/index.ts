// The face of the proof module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { proofRoutes } from './proof.routes';
export { ensureSigningKey, rotateSigningKey } from './proof-keys';
export { runObservation } from './proof-observations.service';
