import { ConnectorError } from '../types';
import type { Workspace } from './client';

// Spreadsheet ranges as rows. The Sheets API has no paging, so a long range is read in blocks
// of rows (`Sheet1!A5001:F10000`, …) until a block comes back empty; a whole sheet is never
// requested at once. Entirely empty rows are left out. Appends go in blocks as well.

export const READ_BLOCK = 5000;
export const APPEND_BLOCK = 1000;

export type A1 = { sheet: string; c1?: string; r1?: number; c2?: string; r2?: number };

const invalid = (m: string) => new ConnectorError('INVALID_STATEMENT', m);

/** `Sheet1`, `'My sheet'!A:F`, `Sheet1!A2:F`, `Sheet1!A1:F500` or `Sheet1!3:9`. */
export function parseA1(range: string): A1 {
  const bang = range.lastIndexOf('!');
  const sheet = bang === -1 ? range : range.slice(0, bang);
  if (!sheet || sheet.length > 200) throw invalid('range must name a sheet, for example Sheet1!A:F');
  if (bang === -1) return { sheet };
  const rest = range.slice(bang + 1);
  const m = /^([A-Z]{1,3})?(\d+)?(?::([A-Z]{1,3})?(\d+)?)?$/i.exec(rest);
  if (!m || rest === '' || rest === ':') throw invalid(`range ${range} is not an A1 range`);
  const num = (s: string | undefined) => (s ? Number(s) : undefined);
  const up = (s: string | undefined) => s?.toUpperCase();
  if (!rest.includes(':')) return { sheet, c1: up(m[1]), r1: num(m[2]), c2: up(m[1]), r2: num(m[2]) };
  return { sheet, c1: up(m[1]), r1: num(m[2]), c2: up(m[3]), r2: num(m[4]) };
}

/** The A1 text of rows `from`..`to` (inclusive) within the range's columns. */
export function rowsRange(a: A1, from: number, to: number): string {
  if (a.c1) return `${a.sheet}!${a.c1}${from}:${a.c2 ?? 'ZZZ'}${to}`;
  return `${a.sheet}!${from}:${to}`;
}

/** Column letters of a 0-based index (0 → A, 26 → AA). */
export function columnLetters(i: number): string {
  let n = i + 1;
  let s = '';
  while (n > 0) {
    const r = (n - 1) % 26;
    s = String.fromCharCode(65 + r) + s;
    n = Math.floor((n - 1) / 26);
  }
  return s;
}

export type SheetRead = { header: string[] | null; blocks: AsyncGenerator<unknown[][]> };

/** Reads a range block by block; with a header, the first row names the columns. */
export async function readRange(
  w: Workspace,
  spreadsheetId: string,
  range: string,
  hasHeader: boolean,
): Promise<SheetRead> {
  const a = parseA1(range);
  const start = a.r1 ?? 1;
  const last = a.r2 ?? Number.POSITIVE_INFINITY;
  const get = async (from: number, to: number): Promise<unknown[][]> => {
    const res = await w.sheets.spreadsheets.values.get({
      spreadsheetId,
      range: rowsRange(a, from, to),
      majorDimension: 'ROWS',
      valueRenderOption: 'UNFORMATTED_VALUE',
      dateTimeRenderOption: 'FORMATTED_STRING',
    });
    return (res.data.values ?? []) as unknown[][];
  };
  let first = await get(start, Math.min(last, start + READ_BLOCK - 1));
  let header: string[] | null = null;
  if (hasHeader) {
    const row = first[0] ?? [];
    header = row.map((v, i) => (v === null || v === undefined || v === '' ? columnLetters(i) : String(v)));
    first = first.slice(1);
  }
  // Google leaves out trailing empty rows of a block, so a short block does not prove the
  // end: reading stops at the first block with no rows at all (or at the range's last row).
  async function* blocks(): AsyncGenerator<unknown[][]> {
    let block = first;
    let next = start + READ_BLOCK;
    let empty = first.length === 0 && !hasHeader;
    for (;;) {
      const kept = block.filter((r) => r.some((v) => v !== '' && v !== null && v !== undefined));
      if (kept.length > 0) yield kept;
      if (empty || next > last) return;
      const to = Math.min(last, next + READ_BLOCK - 1);
      block = await get(next, to);
      empty = block.length === 0;
      next = to + 1;
    }
  }
  return { header, blocks: blocks() };
}

/** The sheet's header row (row 1 of the range), or null when it is empty. */
export async function headerRow(
  w: Workspace,
  spreadsheetId: string,
  range: string,
): Promise<string[] | null> {
  const a = parseA1(range);
  const r = a.r1 ?? 1;
  const res = await w.sheets.spreadsheets.values.get({
    spreadsheetId,
    range: rowsRange(a, r, r),
    majorDimension: 'ROWS',
  });
  const row = (res.data.values?.[0] ?? []) as unknown[];
  return row.length === 0 ? null : row.map((v) => String(v ?? ''));
}

/** A value as a cell: numbers and booleans stay, objects become JSON, null an empty cell. */
export function cellValue(v: unknown): unknown {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return v.toISOString();
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  return JSON.stringify(v);
}

/** Appends rows (arrays in `columns` order) after the range's last row, in blocks. */
export async function appendRows(
  w: Workspace,
  o: { spreadsheetId: string; range: string; valueInputOption: 'RAW' | 'USER_ENTERED' },
  rows: unknown[][],
): Promise<{ updatedRange: string | null; rows: number }> {
  let updatedRange: string | null = null;
  for (let i = 0; i < rows.length; i += APPEND_BLOCK) {
    const res = await w.sheets.spreadsheets.values.append({
      spreadsheetId: o.spreadsheetId,
      range: o.range,
      valueInputOption: o.valueInputOption,
      insertDataOption: 'INSERT_ROWS',
      requestBody: {
        majorDimension: 'ROWS',
        values: rows.slice(i, i + APPEND_BLOCK).map((r) => r.map(cellValue)),
      },
    });
    updatedRange = res.data.updates?.updatedRange ?? updatedRange;
  }
  return { updatedRange, rows: rows.length };
}

/**
 * The column order of rows to append: the sheet's header when it has one (every input column
 * must be in it), otherwise the input's columns, written as the header first.
 */
export async function appendPlan(
  w: Workspace,
  spreadsheetId: string,
  range: string,
  columns: string[],
): Promise<{ order: string[]; writeHeader: boolean }> {
  const header = await headerRow(w, spreadsheetId, range);
  if (!header) return { order: columns, writeHeader: columns.length > 0 };
  const missing = columns.find((c) => !header.includes(c));
  if (missing !== undefined)
    throw new ConnectorError(
      'INVALID_STATEMENT',
      `column ${JSON.stringify(missing)} is not in the sheet's header row`,
    );
  return { order: header, writeHeader: false };
}
