import { type ConnectorContext, ConnectorError } from '../types';
import { withDeadline } from './errors';

/** How one SQL driver opens, tears down, closes a session and names its errors. */
export type StatementDriver<S> = {
  open(): Promise<S>;
  /** Drops the session at once (abort, deadline). */
  destroy(session: S): void;
  close(session: S): Promise<void>;
  error(err: unknown): ConnectorError;
};

/**
 * Runs one operation's `work` (a connection test, an execute, a schema import) on a fresh
 * session: torn down when the context's signal aborts, within the statement deadline, the
 * driver's error mapped, and always closed. The server cancels at `statement_timeout_seconds`
 * first; the client-side deadline, a little later, covers statements a server does not time out
 * and a server that stops answering.
 */
export async function withStatementSession<S, T>(
  ctx: ConnectorContext,
  statementTimeoutSeconds: number,
  driver: StatementDriver<S>,
  work: (session: S) => Promise<T>,
): Promise<T> {
  const session = await driver.open();
  const abort = () => driver.destroy(session);
  ctx.signal?.addEventListener('abort', abort, { once: true });
  try {
    return await withDeadline(
      work(session),
      statementTimeoutSeconds * 1000 + 2000,
      abort,
      () =>
        new ConnectorError(
          'TIMEOUT',
          `the statement did not finish within statement_timeout_seconds (${statementTimeoutSeconds})`,
        ),
    );
  } catch (err) {
    if (ctx.signal?.aborted) throw new ConnectorError('TIMEOUT', 'the execution was canceled');
    throw driver.error(err);
  } finally {
    ctx.signal?.removeEventListener('abort', abort);
    await driver.close(session);
  }
}
