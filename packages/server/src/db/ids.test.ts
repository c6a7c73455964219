import { describe, expect, it } from 'vitest';
import { timeOrderedSlug } from '../http/fields';
import { planOrderedId, timeOrderedId } from './ids';

// PostgreSQL orders uuids by their bytes, i.e. as their lower-case hex text: the comparisons
// below are the index's order.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('timeOrderedId', () => {
  it('is a UUIDv7: the milliseconds first, version 7, the RFC variant', () => {
    const at = Date.UTC(2026, 10, 29, 12, 0, 0, 123);
    const id = timeOrderedId(at);
    expect(id).toMatch(UUID);
    expect(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
    expect(id[14]).toBe('7');
    expect('89ab').toContain(id[19]);
  });

  it('sorts by time, and ids of one millisecond differ', () => {
    const ids = [0, 1, 2, 1000, 86_400_000].map((d) => timeOrderedId(1_700_000_000_000 + d));
    expect([...ids].sort()).toEqual(ids);
    const same = new Set(Array.from({ length: 1000 }, () => timeOrderedId(1_700_000_000_000)));
    expect(same.size).toBe(1000);
  });
});

describe('planOrderedId', () => {
  it('sorts by position in the plan first, then by time', () => {
    const t = 1_700_000_000_000;
    const ids = [planOrderedId(0, t + 5), planOrderedId(1, t), planOrderedId(1, t + 1), planOrderedId(12, t)];
    for (const id of ids) expect(id).toMatch(UUID);
    expect([...ids].sort()).toEqual(ids);
    expect(ids[3].slice(0, 8)).toBe('0000000c');
  });
});

describe('timeOrderedSlug', () => {
  it('keeps the length and alphabet of a random slug, and sorts by time', () => {
    const a = timeOrderedSlug('run', 16, 1_700_000_000_000);
    const b = timeOrderedSlug('run', 16, 1_700_000_001_000);
    const c = timeOrderedSlug('run', 16, 1_800_000_000_000);
    for (const s of [a, b, c]) expect(s).toMatch(/^run-[a-z0-9]{16}$/);
    expect(a < b && b < c).toBe(true);
    expect(timeOrderedSlug('ev', 20)).toMatch(/^ev-[a-z0-9]{20}$/);
  });

  it('sorts as the number for seven base-36 digits of seconds (until the year 4453)', () => {
    expect(timeOrderedSlug('x', 7, 999)).toBe('x-0000000');
    expect(timeOrderedSlug('x', 7, (36 ** 7 - 1) * 1000)).toBe('x-zzzzzzz');
    expect(new Date((36 ** 7 - 1) * 1000).getUTCFullYear()).toBe(4453);
  });
});
