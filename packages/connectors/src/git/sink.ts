import type { Payload, SinkResult, StepContext } from '@sluice/engine';
import { assertWritable, type ConnectorContext, ConnectorError } from '../types';
import { type GitConn, GitSession } from './cli';
import { delimiterOf, fileBodyOf, formatOf } from './formats';
import { repoPath } from './remote';
import { commitFile, listRemote } from './repo';
import { defaultBranchOrNull, operationOf, signalOf, text } from './source';

export async function writeGit(
  conn: GitConn,
  input: Payload,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SinkResult> {
  assertWritable(ctx);
  const op = operationOf(step);
  const file = repoPath(conn.config.base_path, text(step, op.path, 'path'));
  if (file === '') throw new ConnectorError('INVALID_STATEMENT', 'the path names no file');
  const format = formatOf(op.format, file);
  const body = fileBodyOf(input, format, delimiterOf(op.delimiter, file));
  const message = text(step, op.message, 'message') ?? `Sluice run ${step.runSlug}: write ${file}`;
  const session = await GitSession.open(conn, { ...ctx, signal: signalOf(step, ctx) });
  try {
    const refs = await listRemote(session);
    const fallback = defaultBranchOrNull(conn.config.default_branch, refs);
    const branch = text(step, op.branch ?? op.ref, 'branch') ?? fallback;
    if (!branch)
      throw new ConnectorError('NOT_FOUND', 'the repository has no branch: name one in the operation');
    const result = await commitFile(session, {
      branch,
      fallbackBase: fallback,
      path: file,
      content: body.chunks,
      message,
    });
    step.log(
      'info',
      result.changed
        ? `committed ${file} to ${branch}${result.created ? ' (new branch)' : ''}: ${result.commit.slice(0, 12)}, ${result.bytes} bytes, ${body.rows()} rows`
        : `${file} on ${branch} already had this content: nothing committed`,
    );
    return { rows: body.rows(), bytes: result.bytes };
  } finally {
    await session.close();
  }
}
