import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// Comments and docs cite this repository's own pages (docs/*.md, with a heading as `#anchor`)
// or OpenAPI operations, so a reader can follow every reference. This file fails on a citation
// of a document that is not in the repository, and on a cited page or heading that does not exist.

const root = path.resolve(__dirname, '..');
const self = path.relative(root, __filename);

function walk(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(rel, out);
    else if (/\.(ts|tsx|md)$/.test(entry.name)) out.push(rel);
  }
  return out;
}

const packages = readdirSync(path.join(root, 'packages')).map((p) => path.join('packages', p));
const files = [...packages, 'test', 'bench', 'docs']
  .filter((d) => existsSync(path.join(root, d)))
  .flatMap((d) => walk(d))
  .concat(existsSync(path.join(root, 'README.md')) ? ['README.md'] : [])
  .filter((f) => f !== self);
const read = (f: string) => readFileSync(path.join(root, f), 'utf8');

/** References a reader of this repository cannot follow: the shared decisions file, its sections, the seed. */
function outsideReferences(text: string): string[] {
  const found: string[] = [];
  for (const re of [/\bDECISIONS\b(\.md)?/g, /§\s*\d+/g, /\bthe seed\b/gi, /\bseed's\b/gi]) {
    for (const m of text.matchAll(re)) found.push(m[0]);
  }
  return found;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]
      .replace(/`/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

type Citation = { from: string; page: string; anchor?: string };

/** `docs/<page>.md[#anchor]` anywhere, and relative markdown links `](page.md#anchor)` in docs. */
function citationsIn(from: string, text: string): Citation[] {
  const out: Citation[] = [];
  for (const m of text.matchAll(/(?<![\w/.'"-])docs\/([\w/-]+\.md)(?:#([\w-]+))?/g)) {
    out.push({ from, page: path.join('docs', m[1]), anchor: m[2] });
  }
  if (from.endsWith('.md')) {
    for (const m of text.matchAll(/\]\((?!https?:|mailto:|#)([^)\s#]+\.md)(?:#([\w-]+))?\)/g)) {
      out.push({ from, page: path.normalize(path.join(path.dirname(from), m[1])), anchor: m[2] });
    }
    for (const m of text.matchAll(/\]\(#([\w-]+)\)/g)) out.push({ from, page: from, anchor: m[1] });
  }
  return out;
}

describe('references in comments and docs', () => {
  it('recognises what it looks for', () => {
    expect(outsideReferences(`see ${'DECISIONS'}.md ${'§'}4 and ${'the seed'}'s shape`)).toHaveLength(4);
    expect(outsideReferences('docs/runs.md#states: seeds, a seedling')).toEqual([]);
    expect(anchorsOf('# A `b`, c (d/e)\n```\n# not a heading\n```\n## Twice\n## Twice')).toEqual(
      new Set(['a-b-c-de', 'twice', 'twice-1']),
    );
    expect(citationsIn('x.ts', '// (docs/runs.md#states), docs/connectors/ftp.md.')).toEqual([
      { from: 'x.ts', page: 'docs/runs.md', anchor: 'states' },
      { from: 'x.ts', page: 'docs/connectors/ftp.md', anchor: undefined },
    ]);
  });

  it('cite nothing outside the repository (no DECISIONS.md, no section signs, no "the seed")', () => {
    const offenders = files.flatMap((f) => outsideReferences(read(f)).map((r) => `${f}: ${r}`));
    expect(offenders).toEqual([]);
  });

  it('cite docs pages and headings that exist', () => {
    const citations = files.flatMap((f) => citationsIn(f, read(f)));
    expect(citations.length).toBeGreaterThan(50);
    const anchors = new Map<string, Set<string>>();
    const broken: string[] = [];
    for (const c of citations) {
      if (!existsSync(path.join(root, c.page))) {
        broken.push(`${c.from}: ${c.page} does not exist`);
        continue;
      }
      if (!c.anchor) continue;
      if (!anchors.has(c.page)) anchors.set(c.page, anchorsOf(read(c.page)));
      if (!anchors.get(c.page)?.has(c.anchor))
        broken.push(`${c.from}: ${c.page}#${c.anchor} has no such heading`);
    }
    expect(broken).toEqual([]);
  });
});
