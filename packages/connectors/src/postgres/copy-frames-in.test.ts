import { describe, expect, it } from 'vitest';
import { oneCopyData } from './copy-frames-in';

// A chunk's CopyData messages joined into one before they go to the target (copy-frames-in.ts);
// the copies through it against real PostgreSQL are in copy-frames.test.ts.

describe('oneCopyData', () => {
  const message = (body: string) => {
    const b = Buffer.from(body);
    return Buffer.concat([Buffer.from([0x64, 0, 0, 0, b.length + 4]), b]);
  };

  it("joins whole CopyData messages into one in the chunk's own bytes, nothing outside it", () => {
    const messages = Buffer.concat([
      message('PGCOPY header'),
      message(''),
      message('row one'),
      message('r2'),
    ]);
    // The chunk is a slice of a larger read, as the framed chunks are.
    const read = Buffer.concat([Buffer.from('before'), messages, Buffer.from('after')]);
    const chunk = read.subarray(6, 6 + messages.length);
    const one = oneCopyData(chunk);
    expect(Buffer.from(one)).toEqual(message('PGCOPY headerrow oner2'));
    expect(one.buffer).toBe(read.buffer);
    expect(read.subarray(0, 6).toString()).toBe('before');
    expect(read.subarray(read.length - 5).toString()).toBe('after');
  });

  it('returns a single message, and anything but whole CopyData messages, unchanged', () => {
    const single = message('only');
    expect(oneCopyData(single)).toBe(single);
    const cut = Buffer.concat([message('a'), message('b')]).subarray(0, 9);
    expect(oneCopyData(cut)).toBe(cut);
    const other = Buffer.concat([message('a'), Buffer.from([0x63, 0, 0, 0, 4])]);
    expect(oneCopyData(other)).toBe(other);
    const huge = Buffer.concat([message('a'), Buffer.from([0x64, 0x80, 0, 0, 4])]);
    expect(oneCopyData(huge)).toBe(huge);
    expect(oneCopyData(Buffer.alloc(0)).byteLength).toBe(0);
  });
});
