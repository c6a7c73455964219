import path from 'node:path';
import { csvRecords } from '@sluice/engine';
import { csvLine } from '../payloads/csv';
import { toJsonValue } from '../relational/rows';
import { type Column, ConnectorError } from '../types';

// File formats of the FTP connector: which one a path means under `format: auto`, the media
// type of a file, and tables read from (or written as) CSV, JSON and spreadsheets. Spreadsheets
// go through exceljs, loaded only when a spreadsheet is touched.

export type Format = 'csv' | 'json' | 'file' | 'spreadsheet';
export type Table = { columns: string[]; rows: unknown[][]; headless: boolean };

const invalid = (message: string) => new ConnectorError('INVALID_STATEMENT', message);

const EXTENSIONS: Record<string, { format: Format; mime: string }> = {
  '.csv': { format: 'csv', mime: 'text/csv' },
  '.tsv': { format: 'csv', mime: 'text/tab-separated-values' },
  '.json': { format: 'json', mime: 'application/json' },
  '.ndjson': { format: 'json', mime: 'application/x-ndjson' },
  '.jsonl': { format: 'json', mime: 'application/x-ndjson' },
  '.xlsx': {
    format: 'spreadsheet',
    mime: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  },
  '.txt': { format: 'file', mime: 'text/plain' },
  '.xml': { format: 'file', mime: 'application/xml' },
  '.pdf': { format: 'file', mime: 'application/pdf' },
  '.png': { format: 'file', mime: 'image/png' },
  '.jpg': { format: 'file', mime: 'image/jpeg' },
  '.jpeg': { format: 'file', mime: 'image/jpeg' },
  '.gif': { format: 'file', mime: 'image/gif' },
  '.zip': { format: 'file', mime: 'application/zip' },
  '.gz': { format: 'file', mime: 'application/gzip' },
  '.parquet': { format: 'file', mime: 'application/vnd.apache.parquet' },
};

const extOf = (p: string) => path.posix.extname(p).toLowerCase();

export function mimeOf(p: string): string {
  return EXTENSIONS[extOf(p)]?.mime ?? 'application/octet-stream';
}

/** `auto` picks by extension; anything unknown is a plain file. */
export function formatOf(format: 'auto' | Format, p: string): Format {
  if (format !== 'auto') return format;
  return EXTENSIONS[extOf(p)]?.format ?? 'file';
}

export const isLines = (p: string) => extOf(p) === '.ndjson' || extOf(p) === '.jsonl';
export const defaultDelimiter = (p: string) => (extOf(p) === '.tsv' ? '\t' : ',');

/** Column names from a header row: blanks get a name, duplicates a suffix (as the engine does). */
export function headerNames(head: unknown[]): string[] {
  const used = new Set<string>();
  return head.map((h, i) => {
    const text = h === null || h === undefined ? '' : String(h);
    let n = text.length > 0 ? text : `column${i}`;
    while (used.has(n)) n = `${n}_${i}`;
    used.add(n);
    return n;
  });
}

const positional = (width: number) => Array.from({ length: width }, (_, i) => `column${i}`);

function tableOf(records: unknown[][], hasHeader: boolean): Table {
  const width = records.reduce((w, r) => Math.max(w, r.length), 0);
  if (hasHeader && records.length > 0) {
    const columns = headerNames(records[0]);
    const rows = records.slice(1).map((r) => fit(r, columns.length));
    return { columns, rows, headless: false };
  }
  return { columns: positional(width), rows: records.map((r) => fit(r, width)), headless: true };
}

const fit = (r: unknown[], width: number) =>
  r.length === width
    ? r
    : r.length > width
      ? r.slice(0, width)
      : [...r, ...Array(width - r.length).fill(null)];

export async function csvTable(bytes: Buffer, delimiter: string, hasHeader: boolean): Promise<Table> {
  const records: unknown[][] = [];
  async function* one() {
    yield bytes;
  }
  for await (const batch of csvRecords(one(), delimiter)) for (const r of batch) records.push(r);
  return tableOf(records, hasHeader);
}

/** A JSON document (an array of records, or one record) or JSON lines, as a table. */
export function jsonTable(bytes: Buffer, lines: boolean): Table {
  let items: unknown[];
  try {
    const text = bytes.toString('utf8');
    if (lines) {
      items = text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l));
    } else {
      const doc = text.trim() === '' ? [] : JSON.parse(text);
      items = Array.isArray(doc) ? doc : [doc];
    }
  } catch {
    throw new ConnectorError('QUERY_FAILED', 'the file is not valid JSON');
  }
  return recordsTable(items);
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Records as a table: columns are the union of keys in order of appearance. */
export function recordsTable(items: unknown[]): Table {
  if (items.length > 0 && !items.every(isRecord)) {
    return { columns: ['value'], rows: items.map((v) => [v ?? null]), headless: false };
  }
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const r of items as Record<string, unknown>[]) {
    for (const k of Object.keys(r)) {
      if (!seen.has(k)) {
        seen.add(k);
        columns.push(k);
      }
    }
  }
  const rows = (items as Record<string, unknown>[]).map((r) => columns.map((c) => r[c] ?? null));
  return { columns, rows, headless: false };
}

// ---- spreadsheets -------------------------------------------------------------------------

type Range = { top: number; left: number; bottom: number | null; right: number | null };

function columnNumber(letters: string): number {
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n;
}

/** `B2:D20` (or one cell `B2`, the top-left corner of what is read or written). */
export function parseA1(range: string | undefined): Range {
  if (!range) return { top: 1, left: 1, bottom: null, right: null };
  const m = /^\$?([A-Za-z]{1,3})\$?(\d{1,7})(?::\$?([A-Za-z]{1,3})\$?(\d{1,7}))?$/.exec(range.trim());
  if (!m) throw invalid(`range ${JSON.stringify(range)} is not an A1 range such as A1:D20`);
  const a = { row: Number(m[2]), col: columnNumber(m[1]) };
  if (!m[3]) return { top: a.row, left: a.col, bottom: null, right: null };
  const b = { row: Number(m[4]), col: columnNumber(m[3]) };
  if (a.row < 1 || b.row < 1) throw invalid('range rows start at 1');
  return {
    top: Math.min(a.row, b.row),
    left: Math.min(a.col, b.col),
    bottom: Math.max(a.row, b.row),
    right: Math.max(a.col, b.col),
  };
}

/** A cell's value as JSON: formulas give their result, rich text its text, dates ISO text. */
function cellValue(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if ('result' in o) return cellValue(o.result);
    if (Array.isArray(o.richText)) return (o.richText as { text: string }[]).map((t) => t.text).join('');
    if ('text' in o) return cellValue(o.text);
    if ('error' in o) return String(o.error);
    return JSON.stringify(o);
  }
  return v;
}

async function excel() {
  const mod = await import('exceljs');
  return (mod as unknown as { default?: typeof mod }).default ?? mod;
}

export async function spreadsheetTable(
  bytes: Buffer,
  opts: { sheet?: string; range?: string; hasHeader: boolean },
): Promise<{ table: Table; sheet: string; range: string }> {
  const ExcelJS = await excel();
  const book = new ExcelJS.Workbook();
  try {
    await book.xlsx.load(bytes as unknown as ArrayBuffer);
  } catch {
    throw new ConnectorError('QUERY_FAILED', 'the file is not an .xlsx spreadsheet');
  }
  const sheet = opts.sheet ? book.getWorksheet(opts.sheet) : book.worksheets[0];
  if (!sheet) {
    throw new ConnectorError(
      'QUERY_FAILED',
      opts.sheet
        ? `the spreadsheet has no sheet ${JSON.stringify(opts.sheet)}`
        : 'the spreadsheet has no sheet',
    );
  }
  const r = parseA1(opts.range);
  const bottom = r.bottom ?? sheet.rowCount;
  const right = r.right ?? sheet.columnCount;
  const records: unknown[][] = [];
  for (let row = r.top; row <= bottom; row++) {
    const values: unknown[] = [];
    for (let col = r.left; col <= right; col++) values.push(cellValue(sheet.getCell(row, col).value));
    records.push(values);
  }
  // Without an explicit range, trailing empty rows are not data.
  if (r.bottom === null) while (records.length > 0 && records.at(-1)!.every((v) => v === null)) records.pop();
  const a1 = `${letters(r.left)}${r.top}:${letters(right)}${Math.max(r.top, r.top + records.length - 1)}`;
  return { table: tableOf(records, opts.hasHeader), sheet: sheet.name, range: opts.range ?? a1 };
}

function letters(col: number): string {
  let s = '';
  for (let n = Math.max(1, col); n > 0; n = Math.floor((n - 1) / 26))
    s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

/** Writes a table into a new workbook, its header at the range's top-left cell. */
export async function spreadsheetBytes(
  table: { columns: string[]; rows: unknown[][] },
  opts: { sheet?: string; range?: string; hasHeader: boolean },
): Promise<Buffer> {
  const ExcelJS = await excel();
  const book = new ExcelJS.Workbook();
  const sheet = book.addWorksheet(opts.sheet ?? 'Sheet1');
  const r = parseA1(opts.range);
  let row = r.top;
  const put = (values: unknown[]) => {
    values.forEach((v, i) => {
      const j = toJsonValue(v, (b) => b.toString('base64'));
      sheet.getCell(row, r.left + i).value =
        j === null || typeof j === 'string' || typeof j === 'number' || typeof j === 'boolean'
          ? j
          : JSON.stringify(j);
    });
    row++;
  };
  if (opts.hasHeader) put(table.columns);
  for (const values of table.rows) put(values);
  return Buffer.from(await book.xlsx.writeBuffer());
}

// ---- content to write ---------------------------------------------------------------------

const cellText = (v: unknown): string | null => {
  const j = toJsonValue(v, (b) => b.toString('base64'));
  return j === null ? null : typeof j === 'string' ? j : JSON.stringify(j);
};

export function csvBytes(
  table: { columns: string[]; rows: unknown[][] },
  delimiter: string,
  header: boolean,
) {
  const lines: string[] = header ? [csvLine(table.columns, delimiter)] : [];
  for (const row of table.rows) lines.push(csvLine(row.map(cellText), delimiter));
  return Buffer.from(lines.join(''));
}

/** A statement's `content` as a table (objects and arrays of objects). */
export function contentTable(content: unknown): Table {
  if (Array.isArray(content)) return recordsTable(content);
  if (isRecord(content)) return recordsTable([content]);
  throw invalid('content must be an object or an array of objects for this format');
}

// ---- schema inference ---------------------------------------------------------------------

function typeOf(v: unknown, fromText: boolean): string {
  if (v === null || v === undefined || v === '') return 'null';
  if (typeof v === 'string' && fromText) {
    if (/^-?\d{1,15}$/.test(v)) return 'integer';
    if (/^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v)) return 'number';
    if (/^(true|false)$/i.test(v)) return 'boolean';
    return 'string';
  }
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'boolean') return 'boolean';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return 'string';
}

/** Field types of a table's columns from its rows: one type, widened, `string` when mixed. */
export function inferFields(table: Table, fromText: boolean): Column[] {
  return table.columns.map((name, i) => {
    let type = 'null';
    for (const row of table.rows) {
      const t = typeOf(row[i], fromText);
      if (t === 'null' || t === type) continue;
      if (type === 'null') type = t;
      else if ((type === 'integer' && t === 'number') || (type === 'number' && t === 'integer'))
        type = 'number';
      else type = 'string';
    }
    return { name, type: type === 'null' ? 'string' : type };
  });
}
