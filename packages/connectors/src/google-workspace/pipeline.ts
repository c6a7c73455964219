import type { Payload, SinkResult, SourceOutput, StepContext } from '@sluice/engine';
import { googleError } from '../google/auth';
import { csvLine } from '../payloads/csv';
import { deferred, tracked } from '../payloads/streams';
import { signalOf, tableRows } from '../relational/pipeline';
import { assertWritable, type ConnectorContext, ConnectorError } from '../types';
import { folderOf, openWorkspace, spreadsheetOf, type Workspace, type WorkspaceConnection } from './client';
import { downloadFile, uploadFile } from './drive';
import { renderText } from './operations';
import { APPEND_BLOCK, appendPlan, appendRows, readRange } from './sheets';
import { type WorkspaceStep, workspaceStepSchema } from './statement';

// Pipeline steps (`operation_type: workspace_file`). Sources: `read_range` streams a range as
// rows (read block by block), `read_file` streams a Drive file (CSV as CSV, anything else as a
// file payload). Sinks: `append_rows` appends the input's rows under the sheet's header,
// `write_file` uploads the input as a Drive file (rows and JSON as CSV / JSON text).

function stepOp(step: StepContext): WorkspaceStep {
  const r = workspaceStepSchema.safeParse(step.step.operation);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new ConnectorError(
      'INVALID_STATEMENT',
      `operation.${issue.path.join('.') || 'operation'}: ${issue.message}`,
    );
  }
  return r.data;
}

const text = (step: StepContext, v: string) => renderText(v, (name) => step.render(`{{${name}}}`));

/** Column types of a block of values: numbers, booleans or text. */
function typesOf(rows: unknown[][], width: number): string[] {
  return Array.from({ length: width }, (_, i) => {
    const seen = new Set(
      rows
        .map((r) => r[i])
        .filter((v) => v !== undefined && v !== null && v !== '')
        .map((v) => typeof v),
    );
    if (seen.size === 1 && seen.has('number'))
      return rows.every((r) => r[i] === undefined || r[i] === '' || Number.isInteger(r[i]))
        ? 'bigint'
        : 'double precision';
    if (seen.size === 1 && seen.has('boolean')) return 'boolean';
    return 'text';
  });
}

export async function readWorkspace(
  conn: WorkspaceConnection,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SourceOutput> {
  const op = stepOp(step);
  if (op.operation !== 'read_range' && op.operation !== 'read_file')
    throw new ConnectorError(
      'INVALID_STATEMENT',
      `a Google Workspace source reads (read_range or read_file), not ${op.operation}`,
    );
  let w: Workspace | null = null;
  const ended = deferred<string | null>();
  try {
    w = await openWorkspace(conn, ctx);
    const open = w;
    if (op.operation === 'read_file') {
      const dl = await downloadFile(w, op.file_id as string, Number.MAX_SAFE_INTEGER);
      async function* chunks() {
        try {
          for await (const c of dl.chunks) {
            step.count({ bytes_in: c.length });
            yield c;
          }
        } catch (err) {
          throw googleError(err, 'read_file', true);
        } finally {
          open.google.close();
        }
      }
      const tracked_ = tracked(chunks(), () => ended.resolve(null), ended.reject);
      const payload: Payload =
        dl.meta.mime_type === 'text/csv'
          ? { kind: 'csv', delimiter: ',', header: true, chunks: tracked_ }
          : { kind: 'file', mimeType: dl.meta.mime_type, filename: dl.meta.name, chunks: tracked_ };
      return { payload, nextCursor: () => ended.promise };
    }
    const read = await readRange(
      w,
      spreadsheetOf(op.spreadsheet_id, conn),
      text(step, op.range as string),
      op.has_header,
    );
    const first = await read.blocks.next();
    const firstBlock = first.done ? [] : first.value;
    const width = Math.max(read.header?.length ?? 0, ...firstBlock.map((r) => r.length));
    const names = read.header ?? Array.from({ length: width }, (_, i) => `column_${i + 1}`);
    while (names.length < width) names.push(`column_${names.length + 1}`);
    const types = typesOf(firstBlock, width);
    const shape = (r: unknown[]) =>
      names.map((_, i) => {
        const v = r[i];
        if (v === undefined || v === '') return null;
        return types[i] === 'text' && typeof v !== 'string' ? String(v) : v;
      });
    async function* batches(): AsyncGenerator<unknown[][]> {
      try {
        if (firstBlock.length > 0) yield firstBlock.map(shape);
        if (first.done) return;
        for await (const block of read.blocks) {
          if (signalOf(step, ctx).aborted) throw new ConnectorError('TIMEOUT', 'the run was canceled');
          yield block.map(shape);
        }
      } catch (err) {
        throw googleError(err, 'read_range', true);
      } finally {
        open.google.close();
      }
    }
    return {
      payload: {
        kind: 'rows',
        columns: names.map((name, i) => ({ name, type: types[i] })),
        batches: tracked(batches(), () => ended.resolve(null), ended.reject),
      },
      nextCursor: () => ended.promise,
    };
  } catch (err) {
    w?.google.close();
    throw googleError(err, op.operation, true);
  }
}

async function* csvOf(input: Payload): AsyncGenerator<Uint8Array> {
  const rows = await tableRows(input);
  yield Buffer.from(csvLine(rows.columns.map((c) => c.name)));
  for await (const batch of rows.batches) {
    let out = '';
    for (const r of batch)
      out += csvLine(
        r.map((v) =>
          v === null || v === undefined ? null : typeof v === 'object' ? JSON.stringify(v) : String(v),
        ),
      );
    yield Buffer.from(out);
  }
}

export async function writeWorkspace(
  conn: WorkspaceConnection,
  input: Payload,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SinkResult> {
  assertWritable(ctx);
  const op = stepOp(step);
  if (op.operation !== 'append_rows' && op.operation !== 'write_file')
    throw new ConnectorError(
      'INVALID_STATEMENT',
      `a Google Workspace sink writes (append_rows or write_file), not ${op.operation}`,
    );
  let w: Workspace | null = null;
  try {
    w = await openWorkspace(conn, ctx);
    if (op.operation === 'write_file') {
      const file = input.kind === 'file' ? input : null;
      const mimeType = op.mime_type ?? (file ? file.mimeType : 'text/csv');
      const chunks = file ? file.chunks : input.kind === 'csv' ? input.chunks : csvOf(input);
      const out = await uploadFile(
        w,
        {
          fileId: op.file_id,
          name: op.name ? text(step, op.name) : undefined,
          folderId: op.file_id ? undefined : folderOf(op.folder_id, conn),
          mimeType,
        },
        chunks,
      );
      step.log(
        'info',
        `${out.created ? 'created' : 'replaced'} Drive file ${out.file.id} (${out.digest.size_bytes} bytes)`,
      );
      return { rows: 0, bytes: out.digest.size_bytes };
    }
    const spreadsheetId = spreadsheetOf(op.spreadsheet_id, conn);
    const range = text(step, op.range as string);
    const rows = await tableRows(input);
    const names = rows.columns.map((c) => c.name);
    const plan = await appendPlan(w, spreadsheetId, range, names);
    const index = plan.order.map((c) => names.indexOf(c));
    const target = { spreadsheetId, range, valueInputOption: op.value_input_option };
    let pending: unknown[][] = plan.writeHeader ? [plan.order] : [];
    let written = 0;
    let bytes = 0;
    const flush = async () => {
      if (pending.length === 0) return;
      await appendRows(w as Workspace, target, pending);
      pending = [];
    };
    for await (const batch of rows.batches) {
      if (signalOf(step, ctx).aborted) throw new ConnectorError('TIMEOUT', 'the run was canceled');
      for (const r of batch) {
        const row = index.map((i) => (i === -1 ? null : r[i]));
        bytes += Buffer.byteLength(
          JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
        );
        pending.push(row);
        written++;
        if (pending.length >= APPEND_BLOCK) await flush();
      }
    }
    await flush();
    return { rows: written, bytes };
  } catch (err) {
    throw googleError(err, op.operation, true);
  } finally {
    w?.google.close();
  }
}
