import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

// The server's import graph and the boundary rules of
// docs/architecture.md#module-faces-and-boundaries. Paths are posix and relative to packages/server/src; test files are left out (a
// suite may reach into what it tests, and nothing imports a suite).

/** Relative path → source text. */
export type SourceTree = ReadonlyMap<string, string>;
export type ImportEdge = { from: string; to: string; line: number; typeOnly: boolean };
export type Violation = { rule: 'module-face' | 'plumbing' | 'circle'; message: string };

const SOURCE = /\.(ts|mts|mjs)$/;
const TEST = /\.test\.ts$/;
/** Plumbing knows no domain: it may not import these. */
const PLUMBING = ['http/', 'db/', 'crypto/', 'duck-host/'];
const DOMAIN = ['modules/', 'jobs/', 'app-host/', 'app.ts', 'runtime.ts'];

export function readSourceTree(root: string): SourceTree {
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else if (SOURCE.test(entry.name) && !TEST.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        files.set(rel, readFileSync(path.join(root, rel), 'utf8'));
      }
    }
  };
  walk('');
  return files;
}

/** Every import of one file that names another file of the tree: static, re-export, type-only and `import()`. */
export function importEdges(tree: SourceTree): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const [file, text] of tree) {
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
    const add = (specifier: ts.Expression | undefined, typeOnly: boolean, node: ts.Node) => {
      if (!specifier || !ts.isStringLiteralLike(specifier)) return;
      const to = resolve(tree, file, specifier.text);
      if (!to) return;
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      edges.push({ from: file, to, line, typeOnly });
    };
    const visit = (node: ts.Node) => {
      if (ts.isImportDeclaration(node)) {
        const clause = node.importClause;
        const named = clause?.namedBindings;
        const allTypes =
          !!clause &&
          (clause.isTypeOnly ||
            (!clause.name &&
              !!named &&
              ts.isNamedImports(named) &&
              named.elements.length > 0 &&
              named.elements.every((e) => e.isTypeOnly)));
        add(node.moduleSpecifier, allTypes, node);
      } else if (ts.isExportDeclaration(node)) {
        const named = node.exportClause;
        const allTypes =
          node.isTypeOnly ||
          (!!named &&
            ts.isNamedExports(named) &&
            named.elements.length > 0 &&
            named.elements.every((e) => e.isTypeOnly));
        add(node.moduleSpecifier, allTypes, node);
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        add(node.arguments[0], false, node);
      } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
        add(node.argument.literal as ts.Expression, true, node);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return edges;
}

function resolve(tree: SourceTree, from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.posix.join(path.posix.dirname(from), specifier);
  const stem = base.replace(/\.(js|mjs|ts)$/, '');
  for (const candidate of [base, `${stem}.ts`, `${stem}.mts`, `${stem}.mjs`, `${stem}/index.ts`]) {
    if (tree.has(candidate)) return candidate;
  }
  return undefined;
}

/** `modules/<domain>/…` → domain; anything else → undefined. */
export function moduleOf(file: string): string | undefined {
  const m = /^modules\/([^/]+)\//.exec(file);
  return m?.[1];
}

const where = (e: ImportEdge) => `${e.from}:${e.line} imports ${e.to}`;

const isFace = (file: string) => /^modules\/[^/]+\/index\.ts$/.test(file);

/**
 * A file outside a module reaches it only through its face, `modules/<domain>/index.ts`; a face
 * exports no value of a repository (its row types may pass).
 */
export function faceViolations(edges: ImportEdge[]): Violation[] {
  const out: Violation[] = [];
  for (const e of edges) {
    const target = moduleOf(e.to);
    if (!target) continue;
    const outside = moduleOf(e.from) !== target;
    if (outside && !isFace(e.to)) {
      out.push({ rule: 'module-face', message: `${where(e)} instead of modules/${target}/index.ts` });
    }
    if (isFace(e.from) && e.to.endsWith('.repo.ts') && !e.typeOnly) {
      out.push({ rule: 'module-face', message: `${where(e)}: a face exports no repository` });
    }
  }
  return out;
}

/** Plumbing (http/, db/, crypto/) imports no module, job, host or composition root. */
export function plumbingViolations(edges: ImportEdge[]): Violation[] {
  return edges
    .filter((e) => PLUMBING.some((p) => e.from.startsWith(p)) && DOMAIN.some((d) => e.to.startsWith(d)))
    .map((e) => ({ rule: 'plumbing' as const, message: `${where(e)}: plumbing may not know the domain` }));
}

/** Strongly connected components of more than one file (or a file importing itself), type-only imports included. */
export function circles(edges: ImportEdge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const e of edges) {
    if (!next.has(e.from)) next.set(e.from, new Set());
    next.get(e.from)!.add(e.to);
  }
  // Tarjan's algorithm, iterative so a deep chain does not exhaust the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let counter = 0;
  for (const start of next.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; children: string[]; i: number }[] = [];
    const open = (node: string) => {
      index.set(node, counter);
      low.set(node, counter);
      counter++;
      stack.push(node);
      onStack.add(node);
      work.push({ node, children: [...(next.get(node) ?? [])], i: 0 });
    };
    open(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      if (frame.i < frame.children.length) {
        const child = frame.children[frame.i++];
        if (!index.has(child)) open(child);
        else if (onStack.has(child)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(child)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      if (component.length > 1 || next.get(frame.node)?.has(frame.node)) found.push(component.sort());
    }
  }
  return found;
}

export function circleViolations(edges: ImportEdge[]): Violation[] {
  return circles(edges).map((c) => ({
    rule: 'circle' as const,
    message: `import circle of ${c.length} file(s): ${c.join(', ')}`,
  }));
}

/** Every broken rule of the tree, in one list. */
export function checkImportGraph(tree: SourceTree): Violation[] {
  const edges = importEdges(tree);
  return [...faceViolations(edges), ...plumbingViolations(edges), ...circleViolations(edges)];
}
