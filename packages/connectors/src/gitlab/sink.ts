import { forgeWriter } from '../gitforge/sink';
import { gitlabForge } from './client';

/** Commits the upstream payload as one file (docs/connectors/gitlab.md). */
export const writeGitlab = forgeWriter(gitlabForge);
