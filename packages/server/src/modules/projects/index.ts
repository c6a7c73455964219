// The face of the projects module: what other modules and the composition root may use of it.
// Inside the module, files import each other directly; a repository is never exported.

export { findProjectEnvironment } from './project-environments.service';
export { projectsRoutes } from './projects.routes';
export { projectParams } from './projects.schemas';
export { eventSource, requireProject } from './projects.service';
