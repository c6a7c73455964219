import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { deriveRefs, planSpec } from './plan';
import { pipelineSpecSchema } from './spec';

// The specs docs/pipeline-spec.md presents as complete (a ```json block right after a
// `<!-- spec -->` marker) must parse and plan without a finding, so the documentation cannot
// drift from the schema.

const doc = fs.readFileSync(new URL('../../../docs/pipeline-spec.md', import.meta.url), 'utf8');
const blocks = [...doc.matchAll(/<!-- spec -->\s*```json\n([\s\S]*?)\n```/g)].map((m) => m[1]);

describe('docs/pipeline-spec.md examples', () => {
  it('has the marked specs', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(3);
  });

  it.each(blocks.map((text, i) => [i + 1, text]))('spec %i parses and plans without findings', (_n, text) => {
    const parsed = pipelineSpecSchema.safeParse(JSON.parse(text as string));
    expect(parsed.error?.issues ?? []).toEqual([]);
    const spec = parsed.data!;
    const { findings, plan } = planSpec(spec);
    expect(findings).toEqual([]);
    expect(plan?.order).toHaveLength(spec.steps.length);
    expect(deriveRefs(spec).findings).toEqual([]);
  });
});
