import type { Connection, ConnectorContext } from '../types';
import type { ForgeClient, ForgeKind } from './kind';
import { forgeError, newAuth } from './transport';

// One connection to a hosted forge: the kind's SDK client on a token, and the wrappers that turn
// every provider failure into our sanitized ConnectorError. Tokens reach the SDKs only through
// transport.ts.

export type Conn = Connection<Record<string, unknown>, Record<string, unknown>>;

export type ForgeSession = Awaited<ReturnType<typeof openForge>>;

export async function openForge(kind: ForgeKind, conn: Conn, ctx: ConnectorContext) {
  const auth = newAuth(conn.credentials);
  const client = await kind.client(conn.config, auth, ctx);
  /** Runs one provider call; its failure becomes our sanitized error. */
  const call = async <T>(what: string, fn: (c: ForgeClient) => Promise<T>): Promise<T> => {
    try {
      return await fn(client);
    } catch (err) {
      throw forgeError(kind.label, err, auth, what);
    }
  };
  /** The same for a paged stream. */
  async function* stream<T>(what: string, source: () => AsyncIterable<T>): AsyncGenerator<T> {
    try {
      for await (const item of source()) yield item;
    } catch (err) {
      throw forgeError(kind.label, err, auth, what);
    }
  }
  return { client, call, stream };
}

/** The branch a statement or step names, else the configured one, else the repository's default. */
export async function branchOf(conn: Conn, s: ForgeSession, given?: string) {
  if (given) return given;
  const configured = conn.config.default_branch;
  if (typeof configured === 'string' && configured) return configured;
  return (await s.call('read the repository', (c) => c.repository())).defaultBranch;
}
