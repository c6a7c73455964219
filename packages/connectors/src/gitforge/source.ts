import type { Payload, SourceOutput, StepContext } from '@sluice/engine';
import { z } from 'zod';
import { type ConnectorContext, ConnectorError } from '../types';
import { counted, formatOf, lines, mimeOf, readAll } from './files';
import type { ForgeKind } from './kind';
import { branchOf, type Conn, openForge } from './session';
import { gitSourceOperation, type ObjectKind, objectColumns, objectRowsOperation } from './statements';

// A hosted forge kind's pipeline source: a file of the repository (git) or one of the kind's
// object collections as rows (object_rows).

/** The source step's operation: a file (git) or a collection (object_rows). */
export const forgeSourceOperation = (objects: readonly ObjectKind[]) =>
  z.discriminatedUnion('operation_type', [gitSourceOperation, objectRowsOperation(objects)]);

export function forgeReader(kind: ForgeKind) {
  const objectOp = objectRowsOperation(kind.objects);
  return async function read(conn: Conn, step: StepContext, ctx: ConnectorContext): Promise<SourceOutput> {
    const op = step.render(step.step.operation) as Record<string, unknown>;
    const s = await openForge(kind, conn, ctx);
    if (op.operation_type === 'object_rows') {
      const parsed = objectOp.safeParse(op);
      if (!parsed.success)
        throw new ConnectorError(
          'INVALID_STATEMENT',
          `object_rows operation: ${parsed.error.issues[0]?.message}`,
        );
      const { object, state, max_rows } = parsed.data;
      async function* batches() {
        let n = 0;
        for await (const batch of s.stream(`list ${object}`, () => s.client.objects(object, state))) {
          const take = max_rows === undefined ? batch : batch.slice(0, Math.max(0, max_rows - n));
          n += take.length;
          if (take.length) yield take;
          if (max_rows !== undefined && n >= max_rows) return;
        }
      }
      return {
        payload: { kind: 'rows', columns: objectColumns[object], batches: batches() },
        nextCursor: async () => null,
      };
    }
    const parsed = gitSourceOperation.safeParse(op);
    if (!parsed.success)
      throw new ConnectorError('INVALID_STATEMENT', `git operation: ${parsed.error.issues[0]?.message}`);
    const { path } = parsed.data;
    const ref = await branchOf(conn, s, parsed.data.ref);
    const file = await s.call(`read ${path}`, (c) => c.readFile(path, ref));
    step.log('info', `read ${path} at ${ref} from ${kind.label}`);
    const body = s.stream(`read ${path}`, () => counted(file.body, step));
    const format = formatOf(path, parsed.data.format);
    let payload: Payload;
    if (format === 'csv' || format === 'tsv') {
      payload = { kind: 'csv', delimiter: format === 'tsv' ? '\t' : ',', header: true, chunks: body };
    } else if (format === 'ndjson') {
      payload = {
        kind: 'json',
        batches: (async function* () {
          for await (const ls of lines(body)) {
            const items = ls.filter((l) => l.trim()).map((l) => JSON.parse(l));
            if (items.length) yield items;
          }
        })(),
      };
    } else if (format === 'json') {
      payload = {
        kind: 'json',
        batches: (async function* () {
          const doc = JSON.parse(
            (await readAll(body, ctx.limits.maxResponseBytes, 'JSON file')).toString('utf8'),
          );
          const items = Array.isArray(doc) ? doc : [doc];
          for (let i = 0; i < items.length; i += 1000) yield items.slice(i, i + 1000);
        })(),
      };
    } else {
      payload = { kind: 'file', mimeType: mimeOf(path), filename: path.split('/').pop(), chunks: body };
    }
    return { payload, nextCursor: async () => null };
  };
}
