import { forgeReader } from '../gitforge/source';
import { githubForge } from './client';

/** Reads a repository file or an object collection (docs/connectors/github.md). */
export const readGithub = forgeReader(githubForge);
