import type { Column } from '@sluice/engine';

// Whether rows offered as COPY input (`RowsPayload.csv`: CSV from a transform, DuckDB's COPY
// dialect, see the engine's duck-csv; text from a MySQL source) can go into the target's
// columns as they are: the text must mean to PostgreSQL what the row path's values mean.
// Otherwise the sink reads the batches.

export type TargetColumn = { name: string; type: string; oid: number; array: boolean; category: string };

const TEXTUAL = /^(VARCHAR|JSON|UUID)$|^ENUM/;
const FRACTIONAL = /^(FLOAT|REAL|DOUBLE|DECIMAL|NUMERIC)/;
const INTEGER = /^(smallint|integer|bigint)$/;

/** Null when every column fits; otherwise why the rows go row by row. */
export function csvMisfit(columns: Column[], targets: TargetColumn[]): string | null {
  for (const [i, c] of columns.entries()) {
    const t = targets[i];
    const source = c.type.toUpperCase();
    if (t.array) return `column ${c.name} is a PostgreSQL array (${t.type})`;
    if (t.category === 'U' && t.type === 'bytea') return `column ${c.name} is bytea`;
    if (INTEGER.test(t.type) && FRACTIONAL.test(source))
      return `column ${c.name} is ${t.type} and its values are ${c.type}`;
    // Text columns keep the row path's spelling of numbers and times.
    if (t.category === 'S' && !TEXTUAL.test(source) && !/^(STRUCT|MAP)|\[\d*\]$/.test(source))
      return `column ${c.name} is ${t.type} and its values are ${c.type}`;
  }
  return null;
}

const FLOATING = /^(float|double|real)/i;

/**
 * The same for COPY text from a MySQL/MariaDB source, whose values are the server's text: the
 * row path lands that text too, except for floating-point numbers, which it reads as numbers
 * and prints again (1e20 as 100000000000000000000): the same number, another text.
 */
export function copyTextMisfit(columns: Column[], targets: TargetColumn[]): string | null {
  for (const [i, c] of columns.entries()) {
    const t = targets[i];
    if (t.category === 'S' && FLOATING.test(c.type))
      return `column ${c.name} is ${t.type} and its values are ${c.type}`;
  }
  return null;
}
