import fs from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// The order test files start in: the longest first, so that near the end of each project only
// short files are left and both workers stay busy (each project's files must all finish before
// the next project starts; see vitest.config.ts). Vitest orders this way by itself once its
// cache holds a run's durations; a clean clone (CI) has no cache, so the durations of a full
// run on this kind of machine are kept in file-durations.json (refresh it with
// `node scripts/test-durations.mjs` after a full `npm test`). A file in neither is taken for
// long and starts early, like vitest's own rule for files it has not seen.

const UNKNOWN = Number.POSITIVE_INFINITY;

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    // Read here, not beside this module: vitest bundles the config (and this file) elsewhere.
    const table: Record<string, number> = JSON.parse(
      fs.readFileSync(path.join(root, 'test/support/file-durations.json'), 'utf8'),
    );
    const seconds = (spec: TestSpecification) => {
      const key = `${spec.project.name}:${path.relative(root, spec.moduleId).split(path.sep).join('/')}`;
      const cached = this.ctx.cache.getFileTestResults(key)?.duration;
      return cached !== undefined ? cached / 1000 : (table[key] ?? UNKNOWN);
    };
    return [...files].sort((a, b) => {
      const [sa, sb] = [seconds(a), seconds(b)];
      return sa === sb ? 0 : sb > sa ? 1 : -1;
    });
  }
}
