import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkImportGraph,
  circles,
  importEdges,
  readSourceTree,
  type SourceTree,
} from './support/import-graph';

// The boundary rules of docs/architecture.md#module-faces-and-boundaries over the server's
// import graph: modules meet through their faces, plumbing knows no domain, nothing imports in a
// circle (type-only imports included).

const serverSrc = path.resolve(__dirname, '../packages/server/src');

describe('the server import graph', () => {
  const tree = readSourceTree(serverSrc);

  it('reads the real imports, type-only and re-exports included', () => {
    const edges = importEdges(tree);
    const has = (from: string, to: string) => edges.some((e) => e.from === from && e.to === to);
    expect(has('app.ts', 'modules/registry.ts')).toBe(true);
    expect(edges.find((e) => e.from === 'context.ts' && e.to === 'permissions.ts')?.typeOnly).toBe(true);
    expect(has('modules/pipelines/index.ts', 'modules/pipelines/pipelines.service.ts')).toBe(true);
  });

  it('gives every domain module a face', () => {
    const domains = new Set([...tree.keys()].map((f) => /^modules\/([^/]+)\//.exec(f)?.[1]).filter(Boolean));
    const faceless = [...domains].filter((d) => !tree.has(`modules/${d}/index.ts`));
    expect(faceless).toEqual([]);
  });

  it('keeps every boundary rule and has no circle', () => {
    expect(checkImportGraph(tree)).toEqual([]);
  });
});

describe('the boundary checker', () => {
  const planted: SourceTree = new Map([
    // Allowed: a module uses plumbing and another module's face; the face re-exports a row type.
    ['http/errors.ts', 'export class AppError extends Error {}'],
    ['modules/a/index.ts', "export { useA } from './a.service';"],
    [
      'modules/a/a.service.ts',
      "import { AppError } from '../../http/errors';\nexport const useA = AppError;",
    ],
    ['modules/a/a.repo.ts', 'export type ARow = { id: string };\nexport const findA = 1;'],
    ['modules/b/index.ts', "export type { ARow } from '../a/index';\nexport { useB } from './b.service';"],
    // Planted: a cross-module repository import and a reach past the face.
    ['modules/b/b.service.ts', "import { findA } from '../a/a.repo';\nexport const useB = findA;"],
    ['modules/b/b.routes.ts', "import { useA } from '../a/a.service';\nexport const r = useA;"],
    // Planted: a face that exports a repository's function.
    ['modules/c/index.ts', "export { type CRow, findC } from './c.repo';"],
    ['modules/c/c.repo.ts', 'export type CRow = {};\nexport const findC = 1;'],
    // Planted: plumbing that knows a module, and a db file that knows a job.
    ['http/auth.ts', "import { useA } from '../modules/a/index';\nexport const auth = useA;"],
    ['db/client.ts', "export const q = import('../jobs/queue');"],
    ['jobs/queue.ts', 'export const queue = 1;'],
    // Planted: a circle held by a type-only import.
    ['modules/d/d.service.ts', "import type { DRow } from './d.repo';\nexport type S = DRow;"],
    ['modules/d/d.repo.ts', "import { type S } from './d.service';\nexport type DRow = S;"],
  ]);
  const messages = (rule: string) =>
    checkImportGraph(planted)
      .filter((v) => v.rule === rule)
      .map((v) => v.message);

  it('reports a cross-module import of a repository and of anything but the face', () => {
    expect(messages('module-face')).toEqual([
      'modules/b/b.service.ts:1 imports modules/a/a.repo.ts instead of modules/a/index.ts',
      'modules/b/b.routes.ts:1 imports modules/a/a.service.ts instead of modules/a/index.ts',
      'modules/c/index.ts:1 imports modules/c/c.repo.ts: a face exports no repository',
    ]);
  });

  it('reports plumbing that imports the domain', () => {
    expect(messages('plumbing')).toEqual([
      'http/auth.ts:1 imports modules/a/index.ts: plumbing may not know the domain',
      'db/client.ts:1 imports jobs/queue.ts: plumbing may not know the domain',
    ]);
  });

  it('reports an import circle, type-only imports included', () => {
    expect(messages('circle')).toEqual([
      'import circle of 2 file(s): modules/d/d.repo.ts, modules/d/d.service.ts',
    ]);
  });

  it('finds every strongly connected component, a self-import included', () => {
    const edge = (from: string, to: string) => ({ from, to, line: 1, typeOnly: false });
    const found = circles([
      edge('a', 'b'),
      edge('b', 'c'),
      edge('c', 'a'),
      edge('c', 'd'),
      edge('d', 'e'),
      edge('e', 'd'),
      edge('f', 'f'),
      edge('g', 'a'),
    ]);
    expect(found.map((c) => c.join(' ')).sort()).toEqual(['a b c', 'd e', 'f']);
  });
});
