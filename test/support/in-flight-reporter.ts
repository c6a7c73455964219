import fs from 'node:fs';
import path from 'node:path';
import type { Reporter, TestCase, TestModule } from 'vitest/node';

// A vitest reporter for `npm test` (scripts/test.mjs sets SLUICE_TEST_IN_FLIGHT per lane): it keeps
// the test files running right now, and the test each is in, in that JSON file. When a lane stops
// printing, the watchdog in scripts/test.mjs reads it to say where the lane stands before it gathers
// the processes' stacks and stops the lane.

type Entry = { project: string; startedAt: string; test: string | null; testStartedAt: string | null };

export default class InFlightReporter implements Reporter {
  private readonly file = process.env.SLUICE_TEST_IN_FLIGHT;
  private readonly running = new Map<string, Entry>();

  private write() {
    if (!this.file) return;
    const body = JSON.stringify(Object.fromEntries(this.running), null, 1);
    // Written whole and renamed, so the watchdog never reads half a file.
    const tmp = `${this.file}.tmp`;
    fs.writeFileSync(tmp, body);
    fs.renameSync(tmp, this.file);
  }

  private key(module: TestModule) {
    return path.relative(process.cwd(), module.moduleId);
  }

  onTestModuleStart(module: TestModule) {
    this.running.set(this.key(module), {
      project: module.project.name,
      startedAt: new Date().toISOString(),
      test: null,
      testStartedAt: null,
    });
    this.write();
  }

  onTestCaseReady(test: TestCase) {
    const entry = this.running.get(this.key(test.module));
    if (!entry) return;
    entry.test = test.fullName;
    entry.testStartedAt = new Date().toISOString();
    this.write();
  }

  onTestModuleEnd(module: TestModule) {
    this.running.delete(this.key(module));
    this.write();
  }
}
