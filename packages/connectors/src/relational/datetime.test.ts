import { describe, expect, it } from 'vitest';
import { utcDatetime } from './datetime';

describe('utcDatetime', () => {
  it('moves zoned text to UTC and keeps microseconds', () => {
    expect(utcDatetime('2026-01-02T03:04:05.123456+02:00')).toBe('2026-01-02 01:04:05.123456');
    expect(utcDatetime('2026-01-02 03:04:05.12+00')).toBe('2026-01-02 03:04:05.120000');
    expect(utcDatetime('2026-01-01T23:30:00-01:30')).toBe('2026-01-02 01:00:00');
    expect(utcDatetime('2026-03-01T00:15:00Z')).toBe('2026-03-01 00:15:00');
    expect(utcDatetime('2024-02-29 23:59:59.9999999+0100')).toBe('2024-02-29 22:59:59.999999');
  });

  it('leaves text without an offset and other strings alone', () => {
    for (const v of ['2026-01-02 03:04:05', '2026-01-02', 'hello', '', '12:00+01', '2026-13-45T99:00:00Z'])
      expect(utcDatetime(v)).toBe(v);
  });
});
