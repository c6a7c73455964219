import type { Payload, SinkResult, StepContext } from '@sluice/engine';
import { assertWritable, type ConnectorContext, ConnectorError } from '../types';
import { encode, formatOf } from './files';
import type { ForgeKind } from './kind';
import { branchOf, type Conn, openForge } from './session';
import { gitSinkOperation } from './statements';

// A hosted forge kind's pipeline sink: the upstream payload committed as one file.

export function forgeWriter(kind: ForgeKind) {
  return async function write(
    conn: Conn,
    input: Payload,
    step: StepContext,
    ctx: ConnectorContext,
  ): Promise<SinkResult> {
    assertWritable(ctx);
    const op = step.render(step.step.operation) as Record<string, unknown>;
    const parsed = gitSinkOperation.safeParse(op);
    if (!parsed.success)
      throw new ConnectorError('INVALID_STATEMENT', `git operation: ${parsed.error.issues[0]?.message}`);
    const s = await openForge(kind, conn, ctx);
    const { path } = parsed.data;
    const branch = await branchOf(conn, s, parsed.data.branch);
    const { bytes, rows } = await encode(
      input,
      formatOf(path, parsed.data.format),
      ctx.limits.maxResponseBytes,
    );
    const message = parsed.data.message ?? `Sluice run ${step.runSlug}: write ${path}`;
    const out = await s.call(`commit ${path}`, (c) =>
      c.commitFile({ path, branch, content: bytes, message }),
    );
    step.log(
      'info',
      `committed ${path} (${bytes.length} bytes) to ${branch}${out.commit ? ` as ${out.commit.slice(0, 12)}` : ''}`,
    );
    return { rows: rows ?? 0, bytes: bytes.length };
  };
}
