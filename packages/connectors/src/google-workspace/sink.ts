import type { Payload, SinkResult, StepContext } from '@sluice/engine';
import { googleError } from '../google/auth';
import { csvLine } from '../payloads/csv';
import { signalOf, tableRows } from '../relational/pipeline';
import { assertWritable, type ConnectorContext, ConnectorError } from '../types';
import { folderOf, openWorkspace, spreadsheetOf, type Workspace, type WorkspaceConnection } from './client';
import { uploadFile } from './drive';
import { APPEND_BLOCK, appendPlan, appendRows } from './sheets';
import { stepOp, text } from './source';

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
