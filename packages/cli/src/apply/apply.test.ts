// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are apply-file variables, not JavaScript templates
import { describe, expect, it } from 'vitest';
import { specDiff } from '../commands/pipelines-read';
import { applySet, parseDocuments } from '../document';
import { changedFields } from './compare';
import { resolveDocuments } from './engine';
import { portAsNumber, substitute } from './load';

describe('apply helpers', () => {
  it('substitutes ${VAR} and ${VAR:-default}, keeps $${ literal, and names a missing variable', () => {
    const env = { HOST: 'db.local', EMPTY: '' };
    expect(substitute({ a: ['${HOST}:5432', '${PORT:-6543}', '${EMPTY:-x}', '$${HOST}'] }, env, 'f')).toEqual(
      {
        a: ['db.local:5432', '6543', 'x', '${HOST}'],
      },
    );
    expect(() => substitute({ url: 'http://${NOPE}/' }, env, 'f#1')).toThrow(
      'f#1.url: environment variable NOPE',
    );
  });

  it("turns a data source's port variable into a number, and nothing else", () => {
    const ds = { kind: 'DataSource', config: { host: '${H}', port: '${P:-5432}', database: '5432' } };
    const doc = portAsNumber(substitute(ds, { H: 'db', P: '6543' }, 'f') as any);
    expect(doc.config).toEqual({ host: 'db', port: 6543, database: '5432' });
    expect(portAsNumber({ kind: 'DataSource', config: { port: 'x1' } }).config).toEqual({ port: 'x1' });
    expect(portAsNumber({ kind: 'Project', config: { port: '1' } }).config).toEqual({ port: '1' });
  });

  it('compares only what the file says', () => {
    const have = {
      name: 'A',
      config: { base_url: 'u', timeout_seconds: 5, health_path: '/' },
      steps: [{ a: 1, b: 2 }],
    };
    expect(changedFields({ name: 'A', config: { base_url: 'u' }, steps: [{ a: 1 }] }, have)).toEqual([]);
    expect(changedFields({ config: { timeout_seconds: 6 }, steps: [{ a: 1 }, { a: 2 }] }, have)).toEqual([
      'config.timeout_seconds',
      'steps',
    ]);
  });

  it('diffs two specs leaf by leaf', () => {
    expect(specDiff({ steps: [{ slug: 'a' }], edges: [] }, { steps: [{ slug: 'b' }], edges: [] })).toEqual([
      '- steps[0].slug: "a"',
      '+ steps[0].slug: "b"',
    ]);
    expect(specDiff({ x: 1 }, { x: 1 })).toEqual([]);
  });

  it('reads multi-document YAML and JSON, and sets dotted fields with JSON values', () => {
    expect(parseDocuments('kind: A\n---\nkind: B\n', 'x.yaml')).toEqual([{ kind: 'A' }, { kind: 'B' }]);
    expect(parseDocuments('[{"kind": "A"}]', 'x.json')).toEqual([[{ kind: 'A' }]]);
    expect(() => parseDocuments('{', 'x.json')).toThrow('x.json is not JSON');
    const body: Record<string, unknown> = {};
    applySet(body, 'config.port=5432');
    applySet(body, 'name=Shop');
    applySet(body, 'tags=["a"]');
    expect(body).toEqual({ config: { port: 5432 }, name: 'Shop', tags: ['a'] });
  });

  it("expands a pipeline's environments into bindings and deployments, ordered by kind", () => {
    const docs = resolveDocuments([
      {
        file: 'f',
        dir: '.',
        doc: {
          kind: 'Pipeline',
          project: 'p',
          slug: 'x',
          spec: { steps: [] },
          environments: { dev: { bindings: { src: 'ds' }, deploy: true } },
        },
      },
      { file: 'f', dir: '.', doc: { kind: 'Project', slug: 'p' } },
    ]);
    expect(docs.map((d) => `${d.kind.kind}:${d.key}`)).toEqual([
      'Project:p',
      'Pipeline:p/x',
      'Binding:p/dev/x/src',
      'Deployment:p/dev/x',
    ]);
    expect(() =>
      resolveDocuments([
        { file: 'f', dir: '.', doc: { kind: 'Project', slug: 'p' } },
        { file: 'g', dir: '.', doc: { kind: 'Project', slug: 'p' } },
      ]),
    ).toThrow('Project p is named twice');
  });
});
