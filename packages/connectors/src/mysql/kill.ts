import type mysql from 'mysql2';
import type { ConnectorContext } from '../types';
import { closeMysql, connectMysql, destroyMysql, type MysqlConnection, queryMysql } from './connect';

// A statement under way on a session that is torn down (a canceled run, a deadline) goes on on
// the server until it next writes to the closed socket, and a sort or an aggregate writes nothing
// for a while. It is stopped with KILL QUERY on a connection of its own (a user may always stop its
// own sessions' statements), at best effort: whatever fails, the statement still ends when the
// server next writes or reaches its time limit.

/** The server's id of `connection`'s session while a command of it is under way, else null. */
export function busyThread(connection: mysql.Connection): number | null {
  const c = connection as unknown as { _command?: unknown; threadId?: number | null };
  return c._command && c.threadId ? c.threadId : null;
}

/** Stops session `thread`'s statement on the server; connecting is bounded by 10 s. Never rejects. */
export async function killQuery(conn: MysqlConnection, ctx: ConnectorContext, thread: number): Promise<void> {
  try {
    const c = await connectMysql(conn, { ...ctx, signal: AbortSignal.timeout(10_000) });
    try {
      await queryMysql(c, `KILL QUERY ${Math.trunc(thread)}`);
    } finally {
      await closeMysql(c);
    }
  } catch {
    // best effort (above)
  }
}

/** A session's teardown (an abort, a deadline): the socket destroyed, a statement under way killed. */
export const destroyAndKill =
  (conn: MysqlConnection, ctx: ConnectorContext) =>
  (connection: mysql.Connection): void => {
    const thread = busyThread(connection);
    destroyMysql(connection);
    if (thread !== null) void killQuery(conn, ctx, thread);
  };
