import type { OpenedSink, StepContext } from '@sluice/engine';
import { signalOf, sinkTableOf } from '../relational/pipeline';
import type { ConnectorContext } from '../types';
import type { PgConnection } from './connect';
import { openPgSession, type PgSession } from './session';
import { warmTarget } from './sink-start';

// A PostgreSQL sink's session opened at the run's start, beside the source's (SinkSessionCapability):
// the write takes it through ctx.openedSink; until then it is this module's to release. Under
// the run's signal as the write's own would be, so a canceled run tears it down.

/** The session behind each opening; deleted when the write takes it or it is released. */
const opened = new WeakMap<OpenedSink, PgSession>();

export async function openPgSink(
  conn: PgConnection,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<OpenedSink> {
  const s = await openPgSession(conn, ctx, signalOf(step, ctx));
  try {
    // A new backend's first read of the catalog, while the source starts (sink-start.ts).
    const table = s.reused ? null : sinkTableOf(step.step, 'postgres');
    if (table) await warmTarget(s, table);
  } catch (err) {
    await s.close(true);
    throw err;
  }
  const handle: OpenedSink = {
    async release() {
      if (!opened.delete(handle)) return;
      await s.close();
    },
  };
  opened.set(handle, s);
  return handle;
}

/**
 * The session opened for this write, once; null when there is none (or it was not ours). An
 * opening that failed fails the write with its error: the write does not connect a second time
 * (a refused connection is a retryable failure of the run, docs/runs.md "Retries").
 */
export async function takeOpenedPg(ctx: ConnectorContext): Promise<PgSession | null> {
  const handle = await ctx.openedSink;
  if (!handle) return null;
  const s = opened.get(handle);
  if (!s) return null;
  opened.delete(handle);
  return s;
}
