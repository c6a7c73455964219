import { describe, expect, it } from 'vitest';
import { describeWarmStart } from './store';

// A worker's ready lines say what its warm start loaded (docs/operations.md#a-workers-warm-start).

describe('describeWarmStart', () => {
  it('lists the kinds and transforms with the time it took', () => {
    expect(
      describeWarmStart({
        types: ['http', 'postgres'],
        transforms: true,
        exercised: 6000,
        exercisedThrough: 'http',
        planned: 0,
        failed: [],
        ms: 263,
      }),
    ).toBe(
      'http, postgres and transforms loaded, a transform run on made-up records read through the http source (0.26 s)',
    );
    expect(
      describeWarmStart({
        types: ['postgres'],
        transforms: true,
        exercised: 6000,
        exercisedThrough: null,
        planned: 0,
        failed: [],
        ms: 231,
      }),
    ).toBe('postgres and transforms loaded, a transform run on made-up records (0.23 s)');
    expect(
      describeWarmStart({
        types: ['postgres'],
        transforms: false,
        exercised: null,
        exercisedThrough: null,
        planned: 0,
        failed: [],
        ms: 2,
      }),
    ).toBe('postgres loaded (0.00 s)');
  });

  it('counts the deployed specs planned ahead', () => {
    const w = { types: ['postgres'], transforms: false, exercised: null, exercisedThrough: null, failed: [] };
    expect(describeWarmStart({ ...w, planned: 1, ms: 4 })).toBe(
      'postgres loaded, 1 deployed spec planned (0.00 s)',
    );
    expect(describeWarmStart({ ...w, planned: 12, ms: 16 })).toBe(
      'postgres loaded, 12 deployed specs planned (0.02 s)',
    );
  });

  it('says when nothing is deployed, and names what failed to load', () => {
    expect(
      describeWarmStart({
        types: [],
        transforms: false,
        exercised: null,
        exercisedThrough: null,
        planned: 0,
        failed: [],
        ms: 1,
      }),
    ).toBe('nothing deployed to load');
    expect(
      describeWarmStart({
        types: ['mysql', 'snowflake'],
        transforms: false,
        exercised: null,
        exercisedThrough: null,
        planned: 0,
        failed: ['snowflake source'],
        ms: 410,
      }),
    ).toBe('mysql and snowflake loaded (0.41 s); could not load snowflake source (see the log)');
  });
});
