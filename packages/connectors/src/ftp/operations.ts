import { createHash } from 'node:crypto';
import path from 'node:path';
import { csvRecords } from '@sluice/engine';
import type { FileInfo } from 'basic-ftp';
import { fileMetadata } from '../payloads/file-metadata';
import { scrub } from '../relational/errors';
import { RowCollector } from '../relational/rows';
import { type ConnectorContext, ConnectorError, type QueryResult, type SchemaDocument } from '../types';
import { type FtpSession, openFtp } from './client';
import type { FtpConn, FtpStatement } from './config';
import {
  contentTable,
  csvBytes,
  csvTable,
  defaultDelimiter,
  type Format,
  formatOf,
  headerNames,
  inferFields,
  isLines,
  jsonTable,
  mimeOf,
  spreadsheetBytes,
  spreadsheetTable,
  type Table,
} from './formats';
import { parameterLookup, relativeTo, renderContent, renderText, resolveBelow } from './paths';
import { downloadAll, downloadHead, downloadStream, sizeOf, uploadAtomic } from './transfer';

// Test connection, schema import and saved-query execution of the FTP connector.

/** Runs `work` on a fresh session and always closes it; errors come out as ConnectorErrors. */
export async function withSession<T>(
  conn: FtpConn,
  ctx: ConnectorContext,
  doing: string,
  work: (s: FtpSession) => Promise<T>,
  secrets: readonly unknown[] = [],
): Promise<T> {
  const s = await openFtp(conn, ctx);
  try {
    return await work(s);
  } catch (err) {
    const e = s.fail(err, doing);
    throw new ConnectorError(e.code, scrub(e.message, secrets));
  } finally {
    s.close();
  }
}

export async function testFtp(conn: FtpConn, ctx: ConnectorContext): Promise<void> {
  // Login and base_path are checked by opening the session; a listing proves data connections work.
  await withSession(conn, ctx, 'listing base_path', async (s) => {
    await s.client.list();
  });
}

// ---- schema import --------------------------------------------------------------------------

const MAX_FILES = 200;
const MAX_SAMPLED = 50;
const MAX_DEPTH = 3;
const SAMPLE_BYTES = 64 * 1024;
const MAX_SPREADSHEET_SAMPLE = 10 * 1024 * 1024;

async function walk(s: FtpSession, dir: string, depth: number, out: { full: string; size: number }[]) {
  let entries: FileInfo[];
  try {
    entries = await s.client.list(dir);
  } catch {
    return; // an unreadable directory is skipped, not fatal
  }
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (out.length >= MAX_FILES) return;
    if (e.name === '.' || e.name === '..' || e.name.startsWith('.')) continue;
    const full = path.posix.join(dir, e.name);
    if (e.isFile) out.push({ full, size: e.size });
    else if (e.isDirectory && depth < MAX_DEPTH) await walk(s, full, depth + 1, out);
  }
}

/** Complete lines of a sample (its last line may be cut). */
const wholeLines = (b: Buffer, cut: boolean) => {
  if (!cut) return b;
  const end = b.lastIndexOf(0x0a);
  return end > 0 ? b.subarray(0, end + 1) : b;
};

async function sampleFields(
  s: FtpSession,
  f: { full: string; size: number },
): Promise<{ name: string; type: string }[]> {
  const format = formatOf('auto', f.full);
  if (format === 'file') return [];
  if (format === 'spreadsheet') {
    if (f.size > MAX_SPREADSHEET_SAMPLE) return [];
    const { table } = await spreadsheetTable(await downloadAll(s, f.full, MAX_SPREADSHEET_SAMPLE), {
      hasHeader: true,
    });
    table.rows = table.rows.slice(0, 100);
    return inferFields(table, false);
  }
  const cut = f.size > SAMPLE_BYTES;
  const sample = wholeLines(await downloadHead(s, f.full, SAMPLE_BYTES), cut);
  if (format === 'csv') return inferFields(await csvTable(sample, defaultDelimiter(f.full), true), true);
  if (isLines(f.full)) return inferFields(jsonTable(sample, true), false);
  if (cut) return []; // a cut JSON document cannot be parsed
  try {
    return inferFields(jsonTable(sample, false), false);
  } catch {
    return [];
  }
}

export async function importFtpSchema(conn: FtpConn, ctx: ConnectorContext): Promise<SchemaDocument> {
  const found: { full: string; size: number }[] = [];
  const diagnostics: NonNullable<Extract<SchemaDocument, { schema_type: 'file' }>['diagnostics']> = [];
  const files: Extract<SchemaDocument, { schema_type: 'file' }>['files'] = [];
  await withSession(conn, ctx, 'importing the schema', async (s) => {
    await walk(s, s.home, 0, found);
    let sampled = 0;
    for (const f of found) {
      const name = relativeTo(s.home, f.full);
      let fields: { name: string; type: string }[] = [];
      // After a failed transfer closed the connection, the rest are listed without fields.
      if (formatOf('auto', f.full) !== 'file' && sampled < MAX_SAMPLED && !s.client.closed) {
        sampled++;
        try {
          fields = await sampleFields(s, f);
        } catch (err) {
          const e = s.fail(err, `reading ${name}`);
          diagnostics.push({ name, target: name, severity: 'warning', code: e.code, message: e.message });
        }
      }
      files.push({ name, fields, mime_type: mimeOf(f.full) });
    }
  });
  if (found.length >= MAX_FILES) {
    diagnostics.push({
      name: 'files',
      target: conn.config.base_path ?? '.',
      severity: 'info',
      code: 'TRUNCATED',
      message: `only the first ${MAX_FILES} files are listed`,
    });
  }
  return { schema_type: 'file', type: 'ftp', files, ...(diagnostics.length > 0 ? { diagnostics } : {}) };
}

// ---- saved-query execution ------------------------------------------------------------------

const fileMeta = (bytes: Buffer, full: string) =>
  fileMetadata(bytes, mimeOf(full), path.posix.basename(full));

function bounded(table: Table, ctx: ConnectorContext) {
  const collector = new RowCollector(ctx.limits, (b) => b.toString('base64'));
  for (const row of table.rows) if (!collector.add(row)) break;
  return collector;
}

/**
 * CSV and plain files are read as a stream: only the rows a result keeps are held, and the
 * digest is computed on the way, so their size is not bounded.
 */
async function readStreamed(
  s: FtpSession,
  st: FtpStatement,
  full: string,
  format: 'csv' | 'file',
  ctx: ConnectorContext,
): Promise<QueryResult> {
  if ((await sizeOf(s, full)) === null) {
    throw new ConnectorError('QUERY_FAILED', `${path.posix.basename(full)} does not exist on the FTP server`);
  }
  const { chunks, done } = downloadStream(s, full);
  const hash = createHash('sha256');
  let size = 0;
  async function* tapped(): AsyncGenerator<Buffer> {
    for await (const c of chunks) {
      hash.update(c as Buffer);
      size += (c as Buffer).length;
      yield c as Buffer;
    }
    await done;
  }
  const meta = () => ({
    mime_type: mimeOf(full),
    size_bytes: size,
    digest_algorithm: 'sha256' as const,
    digest: hash.digest('hex'),
    filename: path.posix.basename(full),
  });
  const target_path = relativeTo(s.home, full);
  if (format === 'file') {
    for await (const _ of tapped());
    return {
      result_type: 'ftp',
      payload: { operation: 'read', format, file: meta(), target_path },
      row_count: null,
      truncated: false,
    };
  }
  const hasHeader = st.has_header ?? true;
  const collector = new RowCollector(ctx.limits, (b) => b.toString('base64'));
  let columns: string[] | null = null;
  let count = 0;
  for await (const batch of csvRecords(tapped(), st.delimiter ?? defaultDelimiter(full))) {
    for (const r of batch) {
      if (columns === null) {
        columns = hasHeader ? headerNames(r) : r.map((_, i) => `column${i}`);
        if (hasHeader) continue;
      }
      count++;
      if (!collector.truncated) collector.add(fitRow(r, columns.length));
    }
  }
  return {
    result_type: 'ftp',
    payload: {
      operation: 'read',
      format,
      column_names: columns ?? [],
      rows: collector.rows,
      row_count: count,
      is_headless_csv: !hasHeader,
      file: meta(),
      target_path,
    },
    row_count: count,
    truncated: collector.truncated,
  };
}

const fitRow = (r: unknown[], width: number) =>
  r.length === width
    ? r
    : r.length > width
      ? r.slice(0, width)
      : [...r, ...Array(width - r.length).fill(null)];

async function readFile(
  s: FtpSession,
  st: FtpStatement,
  full: string,
  ctx: ConnectorContext,
): Promise<QueryResult> {
  const format = formatOf(st.format, full);
  if (format === 'csv' || format === 'file') return readStreamed(s, st, full, format, ctx);
  const bytes = await downloadAll(s, full, ctx.limits.maxResponseBytes);
  const target_path = relativeTo(s.home, full);
  const file = fileMeta(bytes, full);
  let table: Table;
  const extra: Record<string, unknown> = {};
  if (format === 'json') {
    table = jsonTable(bytes, isLines(full));
  } else {
    const sheet = await spreadsheetTable(bytes, {
      sheet: st.sheet,
      range: st.range,
      hasHeader: st.has_header ?? true,
    });
    table = sheet.table;
    Object.assign(extra, { sheet: sheet.sheet, range: sheet.range, is_headless_spreadsheet: table.headless });
  }
  const rows = bounded(table, ctx);
  return {
    result_type: 'ftp',
    payload: {
      operation: 'read',
      format,
      column_names: table.columns,
      rows: rows.rows,
      row_count: table.rows.length,
      file,
      target_path,
      ...extra,
    },
    row_count: table.rows.length,
    truncated: rows.truncated,
  };
}

async function contentBytes(st: FtpStatement, format: Format, full: string, content: unknown) {
  const header = st.has_header ?? true;
  switch (format) {
    case 'csv': {
      if (typeof content === 'string') return { bytes: Buffer.from(content), rows: null };
      const t = contentTable(content);
      return { bytes: csvBytes(t, st.delimiter ?? defaultDelimiter(full), header), rows: t.rows.length };
    }
    case 'json': {
      if (typeof content === 'string') return { bytes: Buffer.from(content), rows: null };
      const items = Array.isArray(content) ? content : [content];
      const text = isLines(full)
        ? items.map((i) => `${JSON.stringify(i)}\n`).join('')
        : JSON.stringify(content);
      return { bytes: Buffer.from(text), rows: items.length };
    }
    case 'spreadsheet': {
      const t = contentTable(content);
      return {
        bytes: await spreadsheetBytes(t, { sheet: st.sheet, range: st.range, hasHeader: header }),
        rows: t.rows.length,
      };
    }
    default:
      return {
        bytes: Buffer.from(typeof content === 'string' ? content : JSON.stringify(content)),
        rows: null,
      };
  }
}

async function writeFile(
  s: FtpSession,
  st: FtpStatement,
  full: string,
  content: unknown,
): Promise<QueryResult> {
  const format = formatOf(st.format, full);
  const { bytes, rows } = await contentBytes(st, format, full, content);
  async function* once() {
    yield bytes;
  }
  const written = await uploadAtomic(s, full, once(), st.overwrite);
  return {
    result_type: 'ftp',
    payload: {
      operation: 'write',
      format,
      target_path: relativeTo(s.home, full),
      written_bytes: written.bytes,
      ...(rows !== null ? { written_rows: rows } : {}),
      file: fileMeta(bytes, full),
      ...(format === 'spreadsheet'
        ? { sheet: st.sheet ?? 'Sheet1', ...(st.range ? { range: st.range } : {}) }
        : {}),
    },
    row_count: rows,
    truncated: false,
  };
}

export async function executeFtp(
  conn: FtpConn,
  st: FtpStatement,
  parameters: Record<string, unknown>,
  ctx: ConnectorContext,
): Promise<QueryResult> {
  const lookup = parameterLookup(parameters);
  const rendered = renderText(st.path, lookup);
  if (st.operation === 'write') {
    if (ctx.readOnly) {
      throw new ConnectorError(
        'PERMISSION_DENIED',
        'the data source is read-only: a write statement cannot run',
      );
    }
    if (st.content === undefined)
      throw new ConnectorError('INVALID_STATEMENT', 'a write statement needs content');
  }
  const content = st.operation === 'write' ? renderContent(st.content, lookup) : undefined;
  // Parameter values are user data: keep them out of stored messages like the password.
  const secrets = Object.values(parameters);
  return withSession(
    conn,
    ctx,
    st.operation === 'write' ? 'writing the file' : 'reading the file',
    async (s) => {
      const full = resolveBelow(s.home, rendered);
      return st.operation === 'write' ? writeFile(s, st, full, content) : readFile(s, st, full, ctx);
    },
    secrets,
  );
}
