import { describe, expect, it } from 'vitest';
import { describeWarmStart } from './store';

// A worker's ready lines say what its warm start loaded (docs/operations.md#a-workers-warm-start).

describe('describeWarmStart', () => {
  it('lists the kinds and transforms with the time it took', () => {
    expect(describeWarmStart({ types: ['http', 'postgres'], transforms: true, failed: [], ms: 63 })).toBe(
      'http, postgres and transforms loaded (0.06 s)',
    );
    expect(describeWarmStart({ types: ['postgres'], transforms: false, failed: [], ms: 2 })).toBe(
      'postgres loaded (0.00 s)',
    );
  });

  it('says when nothing is deployed, and names what failed to load', () => {
    expect(describeWarmStart({ types: [], transforms: false, failed: [], ms: 1 })).toBe(
      'nothing deployed to load',
    );
    expect(
      describeWarmStart({
        types: ['mysql', 'snowflake'],
        transforms: false,
        failed: ['snowflake source'],
        ms: 410,
      }),
    ).toBe('mysql and snowflake loaded (0.41 s); could not load snowflake source (see the log)');
  });
});
