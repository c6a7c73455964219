import type { SessionIdentity, SessionKind } from '../session-pool';
import { type ConnectorContext, ConnectorError } from '../types';
import { withDeadline } from './errors';

// The life of one pipeline session, the same for every SQL driver: taken from the worker's
// session pool (or opened through the egress guard without one), torn down when the run's
// signal aborts, every wait on the server under the client-side deadline (the server's own
// statement limit applies first; the deadline covers a server that stops answering). A session
// that saw an error, a deadline or an abort is never handed to another run.

export type RunSession<T> = {
  session: T;
  /** Runs one statement under the deadline. */
  timed<R>(work: Promise<R>): Promise<R>;
  /** The error to throw: canceled, or the driver's error as `driverError` maps it. */
  error(err: unknown, driverError: (err: unknown) => ConnectorError): ConnectorError;
  /** Ends the session; `abrupt` drops it at once (never reused). */
  close(abrupt?: boolean): Promise<void>;
};

export async function openRunSession<T>(opts: {
  ctx: ConnectorContext;
  signal: AbortSignal;
  identity: SessionIdentity;
  kind: SessionKind<T>;
  /** Tears the session down at once (abort, deadline). */
  destroy(session: T): void;
  /** Whether a session that ended without error may go back to the pool (no open transaction). */
  idle?(session: T): boolean;
  statementTimeoutSeconds: number;
}): Promise<RunSession<T>> {
  const { signal, kind } = opts;
  const lease = opts.ctx.sessions ? await opts.ctx.sessions.acquire(opts.identity, kind, signal) : null;
  const session = lease ? lease.session : await kind.open();
  let broken = false;
  let closed = false;
  const abort = () => {
    broken = true;
    opts.destroy(session);
  };
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
  const seconds = opts.statementTimeoutSeconds;
  return {
    session,
    timed: (work) =>
      withDeadline(
        work,
        seconds * 1000 + 2000,
        abort,
        () =>
          new ConnectorError(
            'TIMEOUT',
            `a statement did not finish within statement_timeout_seconds (${seconds})`,
          ),
      ),
    error: (err, driverError) => {
      broken = true;
      return signal.aborted ? new ConnectorError('TIMEOUT', 'the run was canceled') : driverError(err);
    },
    close: async (abrupt = false) => {
      if (closed) return;
      closed = true;
      signal.removeEventListener('abort', abort);
      if (abrupt) {
        opts.destroy(session);
        await lease?.release(false);
      } else if (lease) await lease.release(!broken && !signal.aborted && (opts.idle?.(session) ?? true));
      else await kind.close(session);
    },
  };
}
