import type { Payload, SourceOutput, StepContext } from '@sluice/engine';
import { deferred, tracked } from '../payloads/streams';
import { type ConnectorContext, ConnectorError } from '../types';
import { type GitConn, GitSession } from './cli';
import { type GitOperation, gitOperationSchema } from './config';
import { basename, delimiterOf, formatOf, jsonLines, mimeOf } from './formats';
import { jsonRecords } from './json';
import { repoPath } from './remote';
import { blobStream, defaultBranchOf, fetchRef, fileAt, listRemote } from './repo';

// Pipeline steps over git (docs/pipeline-spec.md, operation_type git): a source reads one
// file at a branch or commit and streams it as CSV, JSON records or a raw file; a sink
// commits its upstream payload as one file and pushes the commit.

export function operationOf(step: StepContext): GitOperation {
  const parsed = gitOperationSchema.safeParse(step.step.operation);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConnectorError(
      'INVALID_STATEMENT',
      `the git operation is invalid at ${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
  }
  return parsed.data;
}

/** A template's value as text; a missing or non-text value is a statement error. */
export function text(step: StepContext, value: string | undefined, what: string): string | undefined {
  if (value === undefined) return undefined;
  const v = step.render(value);
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'object') throw new ConnectorError('INVALID_STATEMENT', `${what} must render to text`);
  return String(v);
}

export const signalOf = (step: StepContext, ctx: ConnectorContext) =>
  ctx.signal ? AbortSignal.any([step.signal, ctx.signal]) : step.signal;

export async function readGit(
  conn: GitConn,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SourceOutput> {
  const op = operationOf(step);
  const file = repoPath(conn.config.base_path, text(step, op.path, 'path'));
  const session = await GitSession.open(conn, { ...ctx, signal: signalOf(step, ctx) });
  let handed = false;
  try {
    let ref = text(step, op.ref, 'ref');
    if (!ref) ref = defaultBranchOf(conn.config.default_branch, await listRemote(session));
    const commit = await fetchRef(session, ref);
    // Nothing else goes over the network: the key files go now, not when the stream ends.
    await session.dropSecrets();
    const entry = await fileAt(session, commit, file, ref);
    step.log('info', `read ${file} at ${ref} (commit ${commit.slice(0, 12)}, ${entry.size} bytes)`);
    const blob = blobStream(session, entry.oid, `read ${file}`);
    const ended = deferred<string | null>();
    async function* counted(): AsyncGenerator<Buffer> {
      try {
        for await (const chunk of blob.stdout) {
          step.count({ bytes_in: chunk.length });
          yield chunk;
        }
      } finally {
        blob.kill();
        await session.close();
      }
    }
    const format = formatOf(op.format, file);
    let payload: Payload;
    if (format === 'json' || format === 'jsonl') {
      const records = format === 'json' ? jsonRecords(counted(), op.records_path) : jsonLines(counted());
      payload = { kind: 'json', batches: tracked(records, () => ended.resolve(null), ended.reject) };
    } else {
      const chunks = tracked(counted(), () => ended.resolve(null), ended.reject);
      payload =
        format === 'csv'
          ? { kind: 'csv', delimiter: delimiterOf(op.delimiter, file), header: op.has_header, chunks }
          : { kind: 'file', mimeType: mimeOf(file), filename: basename(file), chunks };
    }
    handed = true;
    // A run that ends before reading the payload still removes the temporary repository.
    step.signal.addEventListener('abort', () => void session.close(), { once: true });
    return { payload, nextCursor: () => ended.promise };
  } finally {
    if (!handed) await session.close();
  }
}

export function defaultBranchOrNull(
  configured: string | undefined,
  refs: Awaited<ReturnType<typeof listRemote>>,
) {
  try {
    return defaultBranchOf(configured, refs);
  } catch {
    return null;
  }
}
