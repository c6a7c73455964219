import { describe, expect, it } from 'vitest';
import { dstFlag, jitterMs, localIso, plan, preview } from './schedule-calc';

// The DST table (docs/triggers.md#daylight-saving-time): spring gaps and fall-backs in five zones
// with different rules (a 30-minute shift on Lord Howe, midnight transitions in Santiago and
// Cairo), for fixed-time and interval crons, against instants worked out by hand.

type Row = { zone: string; cron: string; after: string; want: [string, string, string][] };
const row = (zone: string, cron: string, after: string, want: [string, string, string][]): Row => ({
  zone,
  cron,
  after,
  want,
});

const table: Row[] = [
  // America/New_York: 2026-03-08 02:00 EST → 03:00 EDT; 2026-11-01 02:00 EDT → 01:00 EST.
  row('America/New_York', '30 2 * * *', '2026-03-07T12:00:00Z', [
    ['2026-03-08T07:00:00.000Z', '2026-03-08T03:00:00-04:00', 'gap_shifted'],
    ['2026-03-09T06:30:00.000Z', '2026-03-09T02:30:00-04:00', 'none'],
  ]),
  row('America/New_York', '30 1 * * *', '2026-10-31T12:00:00Z', [
    ['2026-11-01T05:30:00.000Z', '2026-11-01T01:30:00-04:00', 'repeated'],
    ['2026-11-02T06:30:00.000Z', '2026-11-02T01:30:00-05:00', 'none'],
  ]),
  // Asked from inside the repeated hour after the first copy: the second copy is not a new time.
  row('America/New_York', '30 1 * * *', '2026-11-01T05:30:00Z', [
    ['2026-11-02T06:30:00.000Z', '2026-11-02T01:30:00-05:00', 'none'],
  ]),
  row('America/New_York', '*/30 * * * *', '2026-03-08T06:00:00Z', [
    ['2026-03-08T06:30:00.000Z', '2026-03-08T01:30:00-05:00', 'none'],
    ['2026-03-08T07:00:00.000Z', '2026-03-08T03:00:00-04:00', 'none'],
  ]),
  row('America/New_York', '*/30 * * * *', '2026-11-01T04:50:00Z', [
    ['2026-11-01T05:00:00.000Z', '2026-11-01T01:00:00-04:00', 'repeated'],
    ['2026-11-01T05:30:00.000Z', '2026-11-01T01:30:00-04:00', 'repeated'],
    ['2026-11-01T06:00:00.000Z', '2026-11-01T01:00:00-05:00', 'repeated'],
    ['2026-11-01T06:30:00.000Z', '2026-11-01T01:30:00-05:00', 'repeated'],
    ['2026-11-01T07:00:00.000Z', '2026-11-01T02:00:00-05:00', 'none'],
  ]),
  // Europe/Berlin: 2026-03-29 02:00 CET → 03:00 CEST; 2026-10-25 03:00 CEST → 02:00 CET.
  row('Europe/Berlin', '30 2 * * *', '2026-03-28T12:00:00Z', [
    ['2026-03-29T01:00:00.000Z', '2026-03-29T03:00:00+02:00', 'gap_shifted'],
    ['2026-03-30T00:30:00.000Z', '2026-03-30T02:30:00+02:00', 'none'],
  ]),
  row('Europe/Berlin', '30 2 * * *', '2026-10-24T12:00:00Z', [
    ['2026-10-25T00:30:00.000Z', '2026-10-25T02:30:00+02:00', 'repeated'],
    ['2026-10-26T01:30:00.000Z', '2026-10-26T02:30:00+01:00', 'none'],
  ]),
  row('Europe/Berlin', '0 * * * *', '2026-10-24T23:30:00Z', [
    ['2026-10-25T00:00:00.000Z', '2026-10-25T02:00:00+02:00', 'repeated'],
    ['2026-10-25T01:00:00.000Z', '2026-10-25T02:00:00+01:00', 'repeated'],
    ['2026-10-25T02:00:00.000Z', '2026-10-25T03:00:00+01:00', 'none'],
  ]),
  row('Europe/Berlin', '*/30 * * * *', '2026-03-29T00:40:00Z', [
    ['2026-03-29T01:00:00.000Z', '2026-03-29T03:00:00+02:00', 'none'],
  ]),
  // Australia/Lord_Howe: half-hour DST. 2026-10-04 02:00 → 02:30 (+11); 2026-04-05 02:00 → 01:30 (+10:30).
  row('Australia/Lord_Howe', '15 2 * * *', '2026-10-03T00:00:00Z', [
    ['2026-10-03T15:30:00.000Z', '2026-10-04T02:30:00+11:00', 'gap_shifted'],
    ['2026-10-04T15:15:00.000Z', '2026-10-05T02:15:00+11:00', 'none'],
  ]),
  row('Australia/Lord_Howe', '45 1 * * *', '2026-04-04T12:00:00Z', [
    ['2026-04-04T14:45:00.000Z', '2026-04-05T01:45:00+11:00', 'repeated'],
    ['2026-04-05T15:15:00.000Z', '2026-04-06T01:45:00+10:30', 'none'],
  ]),
  row('Australia/Lord_Howe', '*/15 * * * *', '2026-04-04T14:20:00Z', [
    ['2026-04-04T14:30:00.000Z', '2026-04-05T01:30:00+11:00', 'repeated'],
    ['2026-04-04T14:45:00.000Z', '2026-04-05T01:45:00+11:00', 'repeated'],
    ['2026-04-04T15:00:00.000Z', '2026-04-05T01:30:00+10:30', 'repeated'],
    ['2026-04-04T15:15:00.000Z', '2026-04-05T01:45:00+10:30', 'repeated'],
    ['2026-04-04T15:30:00.000Z', '2026-04-05T02:00:00+10:30', 'none'],
  ]),
  row('Australia/Lord_Howe', '*/15 * * * *', '2026-10-03T15:20:00Z', [
    ['2026-10-03T15:30:00.000Z', '2026-10-04T02:30:00+11:00', 'none'],
  ]),
  // America/Santiago: midnight transitions. 2026-09-06 00:00 → 01:00 (-03); 2026-04-05 00:00 → 04-04 23:00 (-04).
  row('America/Santiago', '30 0 * * *', '2026-09-05T12:00:00Z', [
    ['2026-09-06T04:00:00.000Z', '2026-09-06T01:00:00-03:00', 'gap_shifted'],
    ['2026-09-07T03:30:00.000Z', '2026-09-07T00:30:00-03:00', 'none'],
  ]),
  row('America/Santiago', '30 23 * * *', '2026-04-04T12:00:00Z', [
    ['2026-04-05T02:30:00.000Z', '2026-04-04T23:30:00-03:00', 'repeated'],
    ['2026-04-06T03:30:00.000Z', '2026-04-05T23:30:00-04:00', 'none'],
  ]),
  row('America/Santiago', '0 * * * *', '2026-04-05T01:30:00Z', [
    ['2026-04-05T02:00:00.000Z', '2026-04-04T23:00:00-03:00', 'repeated'],
    ['2026-04-05T03:00:00.000Z', '2026-04-04T23:00:00-04:00', 'repeated'],
    ['2026-04-05T04:00:00.000Z', '2026-04-05T00:00:00-04:00', 'none'],
  ]),
  // Africa/Cairo: 2026-04-24 00:00 → 01:00 (+03); 2026-10-29 24:00 → 23:00 (+02).
  row('Africa/Cairo', '30 0 * * *', '2026-04-23T12:00:00Z', [
    ['2026-04-23T22:00:00.000Z', '2026-04-24T01:00:00+03:00', 'gap_shifted'],
    ['2026-04-24T21:30:00.000Z', '2026-04-25T00:30:00+03:00', 'none'],
  ]),
  row('Africa/Cairo', '30 23 * * *', '2026-10-29T12:00:00Z', [
    ['2026-10-29T20:30:00.000Z', '2026-10-29T23:30:00+03:00', 'repeated'],
    ['2026-10-30T21:30:00.000Z', '2026-10-30T23:30:00+02:00', 'none'],
  ]),
  row('Africa/Cairo', '*/30 * * * *', '2026-04-23T21:00:00Z', [
    ['2026-04-23T21:30:00.000Z', '2026-04-23T23:30:00+02:00', 'none'],
    ['2026-04-23T22:00:00.000Z', '2026-04-24T01:00:00+03:00', 'none'],
  ]),
];

describe('DST table', () => {
  for (const r of table) {
    it(`${r.zone} ${r.cron} after ${r.after}`, () => {
      const s = { cron: r.cron, timeZone: r.zone, jitterSeconds: 0, startAt: null, endAt: null };
      const got = plan(s, 'seed', new Date(r.after), r.want.length).map((p) => [
        p.nominalAt.toISOString(),
        localIso(p.nominalAt, r.zone),
        dstFlag(r.cron, r.zone, p.nominalAt),
      ]);
      expect(got).toEqual(r.want);
    });
  }
});

describe('schedule calculator', () => {
  it('jitters deterministically, within the bound and before the next occurrence', () => {
    const n = new Date('2026-05-01T10:00:00Z');
    const a = jitterMs('trigger-a', n, 900, new Date('2026-05-01T10:05:00Z'));
    expect(jitterMs('trigger-a', n, 900, new Date('2026-05-01T10:05:00Z'))).toBe(a);
    expect(a).toBeLessThan(300_000);
    const spread = new Set(Array.from({ length: 20 }, (_, i) => jitterMs(`t${i}`, n, 900, null)));
    expect(spread.size).toBeGreaterThan(10);
    for (const v of spread) expect(v).toBeLessThanOrEqual(900_000);
  });

  it('honours start_at and end_at', () => {
    const s = {
      cron: '0 12 * * *',
      timeZone: 'UTC',
      jitterSeconds: 0,
      startAt: new Date('2026-06-03T00:00:00Z'),
      endAt: new Date('2026-06-05T12:00:00Z'),
    };
    expect(plan(s, 'x', new Date('2026-06-01T00:00:00Z'), 10).map((p) => p.nominalAt.toISOString())).toEqual([
      '2026-06-03T12:00:00.000Z',
      '2026-06-04T12:00:00.000Z',
    ]);
    expect(preview(s, 'x', new Date('2026-06-01T00:00:00Z'), 10)).toHaveLength(2);
  });
});
