import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_URL } from '../../../../test/support/stores';
import { isoOfTimestamptz, parseTimestamptz, readIsoTimestamptz } from './timestamptz';

const driverParse = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text');
/** A parse result as a comparable value: epoch milliseconds, ±Infinity, NaN or null. */
const value = (v: unknown) => (v instanceof Date ? v.getTime() : v);
/** fn's answer, or `throws` (an instant a Date cannot write throws on either path). */
const outcome = (fn: () => string) => {
  try {
    return fn();
  } catch {
    return 'throws';
  }
};
/** What the API wrote for a timestamptz text before isoOfTimestamptz: the driver's Date, in ISO. */
const isoOfDate = (text: string) => outcome(() => (driverParse(text) as Date).toISOString());
/** The same for a time inside json_build_object's JSON: a Date of the JSON string, in ISO. */
const isoOfJson = (text: string) => outcome(() => new Date(text).toISOString());
const iso = (text: string) => outcome(() => isoOfTimestamptz(text));
const two = (n: number) => String(n).padStart(2, '0');

/**
 * 20,000 timestamptz texts of random instants (years 1000–9999) with 0–6 fraction digits, each
 * with the offset `zoneOf` writes; the same texts for the same seed.
 */
function randomTexts(seed: number, zoneOf: (rand: (n: number) => number) => string): string[] {
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const texts: string[] = [];
  for (let i = 0; i < 20_000; i++) {
    const at = new Date(Date.UTC(1000, 0, 1) + rand(2 ** 30) * rand(2 ** 13) * 10);
    const fraction =
      rand(7) === 0
        ? ''
        : `.${String(rand(10 ** 6))
            .padStart(6, '0')
            .slice(0, 1 + rand(6))}`;
    texts.push(`${at.toISOString().slice(0, 19).replace('T', ' ')}${fraction}${zoneOf(rand)}`);
  }
  return texts;
}
/** timestamptz text as json_build_object writes the same instant and offset. */
const jsonOf = (text: string) => text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00');

// The fast parser must give exactly the driver's Date for every text, fast path or not.
describe('timestamptz text parser', () => {
  it('agrees with the driver on every shape PostgreSQL writes and on malformed text', () => {
    // The shapes PostgreSQL writes for years 100–9999 AD take the fast path…
    const fast = [
      '2026-11-26 06:43:12.123456+00',
      '2026-11-26 06:43:12+00',
      '2026-11-26 06:43:12.1+05:30',
      '2026-11-26 06:43:12.12-09',
      '2026-11-26 06:43:12.999999-03:30',
      '1900-01-01 00:00:00+00:19:32',
      '1883-11-18 12:03:57.5-04:56:02',
      '2026-02-30 06:43:12+00',
      '0500-06-01 00:00:00+00',
    ];
    // …everything else goes to the driver's parser.
    const slow = [
      '2026-11-26 06:43:12.1234567+00',
      'infinity',
      '-infinity',
      '0099-01-01 00:00:00+00',
      '0001-12-31 23:59:59.999+00 BC',
      '2026-11-26 06:43:12+00 BC',
      '12026-11-26 06:43:12+00',
      '2026-11-26 06:43:12.+00',
      '2026-11-26 06:43:12.12x+00',
      '2026-11-26 06:43:12+0',
      '2026-11-26 06:43:12+00:3',
      '2026-11-26 06:43:12+00:30:1',
      '2026-11-26 06:43:12+00:30:15:00',
      '2026-11-26T06:43:12.123Z',
      '2026-11-26 06:43:1a+00',
      '2026-11-26',
      '',
    ];
    expect(fast.filter((text) => readIsoTimestamptz(text) === null)).toEqual([]);
    expect(slow.filter((text) => readIsoTimestamptz(text) !== null)).toEqual([]);
    for (const text of [...fast, ...slow]) {
      expect([text, value(parseTimestamptz(text))]).toEqual([text, value(driverParse(text))]);
    }
  });

  it('writes the ISO time of every shape exactly as the Date it stood for did', () => {
    const texts = [
      '2026-11-26 06:43:12.123456+00',
      '2026-11-26 06:43:12+00',
      '2026-11-26 06:43:12.1+00',
      '2026-11-26 06:43:12.12+00',
      '2026-11-26 06:43:12.999999+00',
      '2026-11-26 06:43:12.1+05:30',
      '2026-11-26 06:43:12.12-09',
      '1900-01-01 00:00:00+00:19:32',
      '2024-02-29 23:59:59.5+00',
      '2026-02-30 06:43:12+00',
      '2026-02-29 06:43:12+00',
      '1900-02-29 06:43:12+00',
      '2026-04-31 06:43:12+00',
      '2026-11-26 24:00:00+00',
      '2026-11-26 06:60:00+00',
      '0500-06-01 00:00:00+00',
      '0099-01-01 00:00:00+00',
      '2026-11-26 06:43:12.+00',
      '2026-11-26 06:43:12.1234567+00',
      '2026-11-26 06:43:12+00:00',
      '2026-11-26 06:43:12+00 BC',
      '2026-11-26 06:43:12-00',
    ];
    for (const text of texts) expect([text, iso(text)]).toEqual([text, isoOfDate(text)]);
    const json = [
      '2026-11-26T06:43:12.123456+00:00',
      '2026-11-26T06:43:12+00:00',
      '2026-11-26T06:43:12.1+00:00',
      '2026-11-26T06:43:12.12+00:00',
      '2026-11-26T06:43:12.5+05:30',
      '2026-11-26T06:43:12-03:30',
      '2024-02-29T23:59:59.999999+00:00',
      '2026-11-26T06:43:12.123+00',
      '2026-11-26T06:43:12.123Z',
    ];
    for (const text of json) expect([text, iso(text)]).toEqual([text, isoOfJson(text)]);
  });

  it('writes the ISO time of 20,000 random instants as their Date did, in text and in JSON', () => {
    // A third with a whole-hour offset (through a Date), the rest in UTC (cut from the text).
    const texts = randomTexts(7, (rand) =>
      rand(3) === 0 ? `${rand(2) ? '+' : '-'}${two(rand(15))}` : '+00',
    );
    for (const text of texts) {
      expect([text, iso(text)]).toEqual([text, isoOfDate(text)]);
      expect([text, iso(jsonOf(text))]).toEqual([text, isoOfJson(jsonOf(text))]);
    }
  });

  it('agrees with the driver on 20,000 random instants, offsets and fraction lengths', () => {
    const texts = randomTexts(
      42,
      (rand) => `${rand(2) ? '+' : '-'}${two(rand(15))}${rand(2) ? `:${two(rand(60))}` : ''}`,
    );
    for (const text of texts) {
      expect(readIsoTimestamptz(text)).not.toBeNull();
      expect([text, value(parseTimestamptz(text))]).toEqual([text, value(driverParse(text))]);
    }
  });

  describe('on what the PostgreSQL server writes', () => {
    const client = new pg.Client({ connectionString: ADMIN_URL });
    beforeAll(() => client.connect());
    afterAll(() => client.end());

    // Session time zones with half-hour, quarter-hour and (before 1900) local-mean-time offsets.
    it.each(['UTC', 'Asia/Kolkata', 'America/St_Johns', 'Asia/Kathmandu', 'Europe/Amsterdam'])(
      'in time zone %s',
      async (zone) => {
        await client.query(`set time zone '${zone}'`);
        const { rows } = await client.query({
          text: `select t::text as text, json_build_object('t', t)->>'t' as json, extract(epoch from date_trunc('milliseconds', t)) * 1000 as ms
                   from (values (timestamptz '2026-11-26 06:43:12.123456+00'),
                                (timestamptz '1890-03-01 12:00:00.5+00'),
                                (timestamptz '1970-01-01 00:00:00+00'),
                                (timestamptz '9999-12-31 23:59:59.999999+00'),
                                (timestamptz '0044-03-15 12:00:00+00'),
                                (timestamptz '0044-03-15 12:00:00+00 BC'),
                                ('infinity'::timestamptz)) v(t)`,
          types: { getTypeParser: () => (text: string) => text },
        });
        for (const row of rows) {
          expect([row.text, value(parseTimestamptz(row.text))]).toEqual([
            row.text,
            value(driverParse(row.text)),
          ]);
          if (Number.isFinite(Number(row.ms))) {
            expect([row.text, iso(row.text)]).toEqual([row.text, isoOfDate(row.text)]);
            expect([row.json, iso(row.json)]).toEqual([row.json, isoOfJson(row.json)]);
          }
          if (Number.isFinite(Number(row.ms)) && !row.text.endsWith('BC')) {
            expect([row.text, value(parseTimestamptz(row.text))]).toEqual([row.text, Number(row.ms)]);
          }
        }
      },
    );
  });
});
