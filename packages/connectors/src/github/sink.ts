import { forgeWriter } from '../gitforge/sink';
import { githubForge } from './client';

/** Commits the upstream payload as one file (docs/connectors/github.md). */
export const writeGithub = forgeWriter(githubForge);
