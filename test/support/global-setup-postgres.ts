import type { TestProject } from 'vitest/node';
import { prepareTemplate } from './global-setup';

export default (project: TestProject) => prepareTemplate('postgres', project);
