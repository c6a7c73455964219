import { ConnectorError } from '../types';
import { BYTES, type ColumnKind } from './copy-text-rows';
import type { Field } from './operations';

// Which MySQL/MariaDB columns go into PostgreSQL COPY binary, and how (copy-binary-rows.ts
// writes them): only pairs whose result is certain are planned, each value then being what
// PostgreSQL's input function would make of the server's text; any other column keeps the
// whole result on COPY text, and `copyBinaryPlan` says why.

/** How one value is written. */
export const RAW = 0; // its bytes, as text/varchar/bpchar (the input function checks UTF-8) or bytea
export const INT2 = 1;
export const INT4 = 2;
export const INT8 = 3;
export const BOOL = 4;
export const NUMERIC = 5;
export const TIMESTAMP = 6;
export const DATE = 7;
export type Code = number;

// PostgreSQL type OIDs (pg_type.dat).
const OID = {
  bool: 16,
  bytea: 17,
  int8: 20,
  int2: 21,
  int4: 23,
  text: 25,
  bpchar: 1042,
  varchar: 1043,
  date: 1082,
  timestamp: 1114,
  numeric: 1700,
};

const UNSIGNED = 32;
/** MySQL wire type codes of the integer types → bits they need in PostgreSQL, signed / unsigned. */
const INTEGER_BITS: Record<number, [number, number]> = {
  1: [16, 16], // tinyint
  2: [16, 32], // smallint
  9: [32, 32], // mediumint
  3: [32, 64], // int
  8: [64, 65], // bigint (unsigned: none of PostgreSQL's integers)
  13: [16, 16], // year
};
const DECIMAL_TYPES = new Set([0, 246]);
const DATETIME_TYPES = new Set([7, 12]); // timestamp, datetime
const DATE_TYPE = 10;

export type BinaryTarget = { oid: number; name: string };

/** How each column goes into COPY binary for these targets, or why the rows stay COPY text. */
export function copyBinaryPlan(
  fields: Field[],
  kinds: ColumnKind[],
  targets: BinaryTarget[],
): { codes: Code[] } | { reason: string } {
  if (targets.length !== fields.length) return { reason: 'the target has another number of columns' };
  const codes: Code[] = [];
  for (const [i, f] of fields.entries()) {
    const t = targets[i];
    const bits = INTEGER_BITS[f.columnType];
    const need = bits === undefined ? 0 : bits[(f.flags ?? 0) & UNSIGNED ? 1 : 0];
    let code: Code | null = null;
    if (t.oid === OID.text || t.oid === OID.varchar || t.oid === OID.bpchar) {
      // The text the COPY text path would carry, unescaped (floats never reach here: the sink
      // keeps them off text columns, see csv-in.ts).
      if (kinds[i] !== BYTES) code = RAW;
    } else if (t.oid === OID.bytea) {
      if (kinds[i] === BYTES) code = RAW;
    } else if (t.oid === OID.int2) {
      if (bits && need <= 16) code = INT2;
    } else if (t.oid === OID.int4) {
      if (bits && need <= 32) code = INT4;
    } else if (t.oid === OID.int8) {
      if (bits && need <= 64) code = INT8;
    } else if (t.oid === OID.bool) {
      if (bits) code = BOOL;
    } else if (t.oid === OID.numeric) {
      if (bits || DECIMAL_TYPES.has(f.columnType)) code = NUMERIC;
    } else if (t.oid === OID.timestamp) {
      if (DATETIME_TYPES.has(f.columnType) || f.columnType === DATE_TYPE) code = TIMESTAMP;
    } else if (t.oid === OID.date) {
      if (f.columnType === DATE_TYPE) code = DATE;
    }
    if (code === null)
      return {
        reason: `column ${f.name} goes into ${t.name}, which COPY binary does not write from this type`,
      };
    codes.push(code);
  }
  return { codes };
}

/** The copy's error for a value of `column` that PostgreSQL's text input would refuse as well. */
export function refuse(column: string, what: string): ConnectorError {
  return new ConnectorError('QUERY_FAILED', `column ${column}: a value is ${what}`);
}
