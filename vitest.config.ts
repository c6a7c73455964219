import { defineConfig } from 'vitest/config';
import LongestFirst from './test/support/sequencer';

// API and storage suites (*.api.test.ts) run twice: on embedded PGlite and on the PostgreSQL
// server. Everything else runs once.
const apiSuites = ['packages/**/*.api.test.ts', 'test/**/*.api.test.ts'];
// CLI suites that reach the API only over HTTP (*.cli.test.ts): a client of the API, not of the
// store, so they run once, on the PostgreSQL server (project `cli`); every server suite they go
// through runs on both stores. The CLI suites that open a store themselves (serve, bootstrap, keys
// rotate, the first run) stay API suites and run on both.
const cliSuites = ['packages/cli/src/**/*.cli.test.ts'];

export default defineConfig({
  // `npm test` runs the projects in lanes, one vitest process each (scripts/test.mjs); each lane
  // keeps its own cache of file durations, which the sequencer below reads.
  cacheDir: process.env.SLUICE_TEST_LANE
    ? `node_modules/.vite/lane-${process.env.SLUICE_TEST_LANE}`
    : undefined,
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two test files at a time (vitest's default is one less than the cores: one, here). Most
    // suites wait on real servers, not the CPU, and every suite owns its databases and ports.
    maxWorkers: 2,
    // A worker runs its test files one after another in one process instead of a new process each:
    // every API suite imports the whole server (about 2 s of CPU per file on this machine), so a
    // new process per file spent ~500 s of the run importing the same modules again. Suites own
    // their stores, ports and servers and close them; a suite that changes process.env puts it
    // back.
    isolate: false,
    // The longest files start first, in a clean clone too (test/support/sequencer.ts).
    sequence: { sequencer: LongestFirst },
    // `npm test` records each lane's files in flight for its stall watchdog (scripts/stall-watch.mjs).
    reporters: process.env.SLUICE_TEST_IN_FLIGHT
      ? ['default', './test/support/in-flight-reporter.ts']
      : ['default'],
    // A pg client sent a statement while another waits on it throws, as pg 9 will.
    setupFiles: ['test/support/one-statement-at-a-time.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: [...apiSuites, ...cliSuites, '**/*.browser.test.ts', '**/node_modules/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'api-pglite',
          include: apiSuites,
          env: { SLUICE_TEST_STORE: 'pglite' },
          globalSetup: ['test/support/global-setup-pglite.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'api-postgres',
          include: apiSuites,
          env: { SLUICE_TEST_STORE: 'postgres' },
          globalSetup: ['test/support/global-setup-postgres.ts'],
        },
      },
      {
        // Its own project so that `npm test` can run it in the other lane (scripts/test.mjs).
        extends: true,
        test: {
          name: 'cli',
          include: cliSuites,
          env: { SLUICE_TEST_STORE: 'postgres' },
          globalSetup: ['test/support/global-setup-postgres.ts'],
        },
      },
      {
        // The browser app end to end in Debian's chromium, once, on the PostgreSQL server.
        extends: true,
        test: {
          name: 'browser',
          include: ['test/browser/**/*.browser.test.ts'],
          env: { SLUICE_TEST_STORE: 'postgres' },
          globalSetup: ['test/support/global-setup-postgres.ts', 'test/browser/setup-browser.ts'],
          testTimeout: 180_000,
          // expect.poll waits on the app's answer to a click; its default (1 s) is shorter than a
          // request takes while the rest of the suite loads both cores. Playwright's own waits are 30 s.
          expect: { poll: { timeout: 15_000 } },
        },
      },
    ],
  },
});
