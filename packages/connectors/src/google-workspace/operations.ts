import { randomBytes } from 'node:crypto';
import { RowCollector } from '../relational/rows';
import {
  type Column,
  type ConnectorContext,
  ConnectorError,
  type QueryResult,
  type SchemaDocument,
} from '../types';
import { folderOf, spreadsheetOf, type Workspace, type WorkspaceConnection, withWorkspace } from './client';
import type { WorkspaceStatement } from './config';
import { Digest, downloadFile, listFiles, uploadFile } from './drive';
import { appendPlan, appendRows, readRange } from './sheets';

// Test connection, schema import and saved-query execution (result type `workspace_file`).

const SPREADSHEET = 'application/vnd.google-apps.spreadsheet';

export function testWorkspace(conn: WorkspaceConnection, ctx: ConnectorContext): Promise<void> {
  return withWorkspace(conn, ctx, 'test connection', async (w) => {
    // The token exchange plus one read of what the data source names proves access to it.
    if (conn.config.spreadsheet_id)
      await w.sheets.spreadsheets.get({ spreadsheetId: conn.config.spreadsheet_id, fields: 'spreadsheetId' });
    if (conn.config.drive_folder_id)
      await w.drive.files.get({ fileId: conn.config.drive_folder_id, fields: 'id', supportsAllDrives: true });
    if (!conn.config.spreadsheet_id && !conn.config.drive_folder_id)
      await w.drive.files.list({ pageSize: 1, fields: 'files(id)' });
  });
}

const quoteSheet = (title: string) => `'${title.replace(/'/g, "''")}'`;

/** Fields of a sheet: the header row's names, typed by the row below it. */
async function sheetFields(w: Workspace, spreadsheetId: string, title: string): Promise<Column[]> {
  const res = await w.sheets.spreadsheets.values.get({
    spreadsheetId,
    range: `${quoteSheet(title)}!1:2`,
    valueRenderOption: 'UNFORMATTED_VALUE',
  });
  const [header = [], sample = []] = (res.data.values ?? []) as unknown[][];
  return header.map((name, i) => ({ name: String(name), type: cellType(sample[i]) }));
}

const cellType = (v: unknown) =>
  typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'boolean' : 'string';

type SchemaFile = { name: string; fields: Column[]; mime_type?: string; resource_id?: string };

async function spreadsheetFiles(w: Workspace, spreadsheetId: string): Promise<SchemaFile[]> {
  const res = await w.sheets.spreadsheets.get({
    spreadsheetId,
    fields: 'spreadsheetId,properties.title,sheets.properties',
  });
  const out: SchemaFile[] = [];
  for (const s of res.data.sheets ?? []) {
    const title = s.properties?.title ?? '';
    out.push({
      name: `${res.data.properties?.title ?? spreadsheetId}/${title}`,
      fields: await sheetFields(w, spreadsheetId, title),
      mime_type: SPREADSHEET,
      resource_id: `${spreadsheetId}!${quoteSheet(title)}`,
    });
  }
  return out;
}

const MAX_SPREADSHEETS = 20;

export function importWorkspaceSchema(
  conn: WorkspaceConnection,
  ctx: ConnectorContext,
): Promise<SchemaDocument> {
  return withWorkspace(conn, ctx, 'schema import', async (w) => {
    const files: SchemaFile[] = [];
    if (conn.config.spreadsheet_id) files.push(...(await spreadsheetFiles(w, conn.config.spreadsheet_id)));
    if (conn.config.drive_folder_id) {
      let sheetsRead = 0;
      for (const f of await listFiles(w, conn.config.drive_folder_id)) {
        if (
          f.mime_type === SPREADSHEET &&
          f.id !== conn.config.spreadsheet_id &&
          sheetsRead++ < MAX_SPREADSHEETS
        ) {
          files.push(...(await spreadsheetFiles(w, f.id)));
        } else if (f.mime_type !== SPREADSHEET) {
          files.push({ name: f.name, fields: [], mime_type: f.mime_type, resource_id: f.id });
        }
      }
    }
    return { schema_type: 'file', type: 'google_workspace', files };
  });
}

function rowsParam(
  rows: WorkspaceStatement['rows'],
  parameters: Record<string, unknown>,
): Record<string, unknown>[] {
  let value: unknown = rows;
  if (typeof rows === 'string') {
    const m = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/.exec(rows.trim());
    value = m ? parameters[m[1]] : null;
  }
  if (!Array.isArray(value) || value.some((r) => r === null || typeof r !== 'object' || Array.isArray(r)))
    throw new ConnectorError(
      'INVALID_STATEMENT',
      'rows must be an array of objects (or {{param}} naming one)',
    );
  return value as Record<string, unknown>[];
}

/** `{{param}}` in a text field (file names, ranges), from the execution's parameters. */
export function renderText(text: string, value: (name: string) => unknown): string {
  return text.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}/g, (_, name: string) =>
    String(value(name) ?? ''),
  );
}

const result = (
  payload: Record<string, unknown>,
  rowCount: number | null,
  truncated = false,
): QueryResult => ({
  result_type: 'workspace_file',
  payload,
  row_count: rowCount,
  truncated,
});

export async function executeWorkspace(
  conn: WorkspaceConnection,
  s: WorkspaceStatement,
  parameters: Record<string, unknown>,
  ctx: ConnectorContext,
): Promise<QueryResult> {
  const value = (name: string) => {
    if (name === 'runtime.run_slug') return `exec-${randomBytes(4).toString('hex')}`;
    if (!(name in parameters))
      throw new ConnectorError('INVALID_STATEMENT', `parameter ${name} has no value`);
    return parameters[name];
  };
  const writes = s.operation === 'append_rows' || s.operation === 'write_file';
  if (writes && ctx.readOnly)
    throw new ConnectorError('PERMISSION_DENIED', `the data source is read-only: ${s.operation} is refused`);
  return withWorkspace(conn, ctx, s.operation, async (w) => {
    switch (s.operation) {
      case 'read_range': {
        const spreadsheetId = spreadsheetOf(s.spreadsheet_id, conn);
        const range = renderText(s.range as string, value);
        const read = await readRange(w, spreadsheetId, range, s.has_header);
        const collector = new RowCollector(ctx.limits, (b) => b.toString('base64'));
        let width = read.header?.length ?? 0;
        reading: for await (const block of read.blocks) {
          for (const row of block) {
            width = Math.max(width, row.length);
            if (!collector.add(row)) break reading;
          }
        }
        const rows = collector.rows.map((r) => [...r, ...Array(Math.max(0, width - r.length)).fill(null)]);
        return result(
          {
            operation: s.operation,
            spreadsheet_id: spreadsheetId,
            range,
            column_names: read.header,
            rows,
            row_count: rows.length,
          },
          rows.length,
          collector.truncated,
        );
      }
      case 'append_rows': {
        const spreadsheetId = spreadsheetOf(s.spreadsheet_id, conn);
        const range = renderText(s.range as string, value);
        const objects = rowsParam(s.rows, parameters);
        const columns = [...new Set(objects.flatMap((o) => Object.keys(o)))];
        const plan = await appendPlan(w, spreadsheetId, range, columns);
        const rows = objects.map((o) => plan.order.map((c) => o[c] ?? null));
        const out = await appendRows(
          w,
          { spreadsheetId, range, valueInputOption: s.value_input_option },
          plan.writeHeader ? [plan.order, ...rows] : rows,
        );
        return result(
          {
            operation: s.operation,
            spreadsheet_id: spreadsheetId,
            range,
            updated_range: out.updatedRange,
            written_rows: rows.length,
          },
          null,
        );
      }
      case 'list_files': {
        const files = await listFiles(w, folderOf(s.folder_id, conn));
        const kept = files.slice(0, ctx.limits.maxRows);
        return result({ operation: s.operation, files: kept }, kept.length, kept.length < files.length);
      }
      case 'read_file': {
        const dl = await downloadFile(w, s.file_id as string, ctx.limits.maxResponseBytes);
        const digest = new Digest();
        const parts: Buffer[] = [];
        let kept = 0;
        for await (const c of dl.chunks) {
          digest.update(c);
          // Text content is shown up to the stored-result size; other bytes never are.
          if (kept < ctx.limits.maxResultBytes) parts.push(Buffer.from(c));
          kept += c.length;
        }
        const file = digest.metadata(dl.meta.mime_type, dl.meta.name);
        const textual = /^text\/|^application\/(json|csv)/.test(dl.meta.mime_type);
        const text = textual
          ? Buffer.concat(parts).subarray(0, ctx.limits.maxResultBytes).toString('utf8')
          : null;
        return result(
          { operation: s.operation, file_id: dl.meta.id, file, ...(text !== null ? { text } : {}) },
          null,
          textual && kept > ctx.limits.maxResultBytes,
        );
      }
      case 'write_file': {
        const content = s.content;
        const json = typeof content !== 'string';
        const bytes = Buffer.from(json ? JSON.stringify(content) : (content as string));
        const name = s.name ? renderText(s.name, value) : undefined;
        const out = await uploadFile(
          w,
          {
            fileId: s.file_id,
            name,
            folderId: s.file_id ? undefined : folderOf(s.folder_id, conn),
            mimeType: s.mime_type ?? (json ? 'application/json' : 'text/plain'),
          },
          [bytes],
        );
        return result(
          { operation: s.operation, file_id: out.file.id, created: out.created, file: out.digest },
          null,
        );
      }
    }
  });
}
