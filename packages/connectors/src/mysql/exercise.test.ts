import { describe, expect, it } from 'vitest';
import { exerciseMysqlEncoders } from './exercise';

// A worker's warm start runs the MySQL source's COPY encoders once on made-up rows
// (docs/operations.md#a-workers-warm-start): every made-up value is one the encoders take.

describe('exerciseMysqlEncoders', () => {
  it('runs every made-up row through COPY binary and COPY text', async () => {
    // A thousand rows of nine columns, twenty times over, come to well over a megabyte each way.
    expect(await exerciseMysqlEncoders()).toBeGreaterThan(2_000_000);
  });
});
