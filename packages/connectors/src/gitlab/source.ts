import { forgeReader } from '../gitforge/source';
import { gitlabForge } from './client';

/** Reads a repository file or an object collection (docs/connectors/gitlab.md). */
export const readGitlab = forgeReader(gitlabForge);
