import { type BinaryTarget, copyBinaryPlan } from './copy-binary-plan';
import { CopyBinaryRows } from './copy-binary-rows';
import { CopyTextRows, copyTextKinds } from './copy-text-rows';
import type { Field } from './operations';

// The MySQL source's part of a worker's warm start (docs/operations.md#a-workers-warm-start):
// made-up text-protocol row packets, one column of each kind a copy into PostgreSQL writes
// (integers of three widths, a decimal, text with COPY's specials, a datetime, a date, a
// tinyint as boolean, a nullable long text), go through both COPY encoders the source hands its
// rows on with, so that a fresh worker's first copy does not run them in their first tier. Nothing
// connects; the chunks they make are dropped.

/** Rows made, and how many times each encoder takes them (its code tiers up on the repeats). */
const ROWS = 1000;
const ROUNDS = 20;
const UTF8 = { characterSet: 224, encoding: 'utf8' };

const columns: { field: Field; target: BinaryTarget; value(i: number): string | null }[] = [
  {
    field: { name: 'id', columnType: 3, characterSet: 63 },
    target: { oid: 23, name: 'integer' },
    value: String,
  },
  {
    field: { name: 'big', columnType: 8, characterSet: 63 },
    target: { oid: 20, name: 'bigint' },
    value: (i) => String(i * 1_000_003 - 5_000_000_000),
  },
  {
    field: { name: 'small', columnType: 2, characterSet: 63 },
    target: { oid: 21, name: 'smallint' },
    value: (i) => String((i % 30_000) - 15_000),
  },
  {
    field: { name: 'amount', columnType: 246, characterSet: 63 },
    target: { oid: 1700, name: 'numeric' },
    value: (i) => `${i % 2 ? '-' : ''}${i % 100_000}.${String(i % 100).padStart(2, '0')}`,
  },
  {
    field: { name: 'name', columnType: 253, ...UTF8 },
    target: { oid: 25, name: 'text' },
    value: (i) => `name ${i}\twith "quotes", a \\ and ü`,
  },
  {
    field: { name: 'at', columnType: 12, characterSet: 63 },
    target: { oid: 1114, name: 'timestamp' },
    value: (i) =>
      `20${10 + (i % 17)}-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')} ` +
      `${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:07${i % 3 ? `.${String(i % 1_000_000).padStart(6, '0')}` : ''}`,
  },
  {
    field: { name: 'day', columnType: 10, characterSet: 63 },
    target: { oid: 1082, name: 'date' },
    value: (i) => `19${70 + (i % 30)}-0${1 + (i % 9)}-1${i % 10}`,
  },
  {
    field: { name: 'ok', columnType: 1, characterSet: 63 },
    target: { oid: 16, name: 'boolean' },
    value: (i) => (i % 2 ? '1' : '0'),
  },
  {
    field: { name: 'note', columnType: 252, ...UTF8 },
    target: { oid: 25, name: 'text' },
    value: (i) =>
      i % 4 === 0 ? null : `a note of row ${i}, longer than thirty-two bytes\n`.repeat(1 + (i % 3)),
  },
];

/** The rows as text-protocol packets back to back, and where each one ends. */
function packets(): { buf: Buffer; ends: number[] } {
  let buf = Buffer.allocUnsafe(ROWS * 256);
  const ends: number[] = [];
  let at = 0;
  for (let i = 0; i < ROWS; i++) {
    for (const c of columns) {
      // Length-encoded strings: NULL is 0xFB; one length byte below 251, else 0xFC and two bytes.
      const v = c.value(i);
      const n = v === null ? 0 : Buffer.byteLength(v);
      if (at + 3 + n > buf.length) buf = Buffer.concat([buf.subarray(0, at), Buffer.allocUnsafe(buf.length)]);
      if (v === null) {
        buf[at++] = 0xfb;
        continue;
      }
      if (n < 251) buf[at++] = n;
      else {
        buf[at++] = 0xfc;
        buf[at++] = n & 0xff;
        buf[at++] = n >> 8;
      }
      at += buf.write(v, at);
    }
    ends.push(at);
  }
  return { buf, ends };
}

/** Runs the made-up rows through the COPY binary and COPY text encoders; resolves with the bytes they made. */
export async function exerciseMysqlEncoders(): Promise<number> {
  const fields = columns.map((c) => c.field);
  const kinds = copyTextKinds(fields);
  if ('reason' in kinds) throw new Error(`the made-up columns do not go into COPY text: ${kinds.reason}`);
  const plan = copyBinaryPlan(
    fields,
    kinds.kinds,
    columns.map((c) => c.target),
  );
  if ('reason' in plan) throw new Error(`the made-up columns do not go into COPY binary: ${plan.reason}`);
  const { buf, ends } = packets();
  let bytes = 0;
  const onChunk = (chunk: Buffer) => {
    bytes += chunk.length;
  };
  const names = fields.map((f) => f.name);
  for (const encoder of [
    new CopyBinaryRows(plan.codes, names, onChunk, undefined, null, kinds.kinds),
    new CopyTextRows(kinds.kinds, onChunk),
  ]) {
    for (let round = 0; round < ROUNDS; round++) {
      let start = 0;
      for (const end of ends) {
        encoder.packet(buf, start, end);
        start = end;
      }
    }
    encoder.finish();
    // A turn of the event loop between the two: a worker's other work is not held for both.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return bytes;
}
