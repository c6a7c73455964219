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
        failed: [],
        ms: 2,
      }),
    ).toBe('postgres loaded (0.00 s)');
  });

  it('says when nothing is deployed, and names what failed to load', () => {
    expect(
      describeWarmStart({
        types: [],
        transforms: false,
        exercised: null,
        exercisedThrough: null,
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
        failed: ['snowflake source'],
        ms: 410,
      }),
    ).toBe('mysql and snowflake loaded (0.41 s); could not load snowflake source (see the log)');
  });
});
