import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_URL } from '../../../../test/support/stores';
import { parseTimestamptz, readIsoTimestamptz } from './timestamptz';

const driverParse = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text');
/** A parse result as a comparable value: epoch milliseconds, ±Infinity, NaN or null. */
const value = (v: unknown) => (v instanceof Date ? v.getTime() : v);

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

  it('agrees with the driver on 20,000 random instants, offsets and fraction lengths', () => {
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const two = (n: number) => String(n).padStart(2, '0');
    for (let i = 0; i < 20_000; i++) {
      const at = new Date(Date.UTC(1000, 0, 1) + rand(2 ** 30) * rand(2 ** 13) * 10);
      const fraction =
        rand(7) === 0
          ? ''
          : `.${String(rand(10 ** 6))
              .padStart(6, '0')
              .slice(0, 1 + rand(6))}`;
      const zone = `${rand(2) ? '+' : '-'}${two(rand(15))}${rand(2) ? `:${two(rand(60))}` : ''}`;
      const text = `${at.toISOString().slice(0, 19).replace('T', ' ')}${fraction}${zone}`;
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
          text: `select t::text as text, extract(epoch from date_trunc('milliseconds', t)) * 1000 as ms
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
          if (Number.isFinite(Number(row.ms)) && !row.text.endsWith('BC')) {
            expect([row.text, value(parseTimestamptz(row.text))]).toEqual([row.text, Number(row.ms)]);
          }
        }
      },
    );
  });
});
