import type { Payload, SourceOutput, StepContext } from '@sluice/engine';
import { googleError } from '../google/auth';
import { deferred, tracked } from '../payloads/streams';
import { signalOf } from '../relational/pipeline';
import { type ConnectorContext, ConnectorError } from '../types';
import { openWorkspace, spreadsheetOf, type Workspace, type WorkspaceConnection } from './client';
import { type WorkspaceStep, workspaceStepSchema } from './config';
import { downloadFile } from './drive';
import { renderText } from './operations';
import { readRange } from './sheets';

// Pipeline steps (`operation_type: workspace_file`). Sources: `read_range` streams a range as
// rows (read block by block), `read_file` streams a Drive file (CSV as CSV, anything else as a
// file payload). Sinks: `append_rows` appends the input's rows under the sheet's header,
// `write_file` uploads the input as a Drive file (rows and JSON as CSV / JSON text).

export function stepOp(step: StepContext): WorkspaceStep {
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

export const text = (step: StepContext, v: string) => renderText(v, (name) => step.render(`{{${name}}}`));

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
