import type { Connection, ConnectorContext } from '@sluice/connectors';
import { connectorFor, defaultLimits, egressPolicy } from '@sluice/connectors';
import type { Payload } from '@sluice/engine';
import { batches } from '../../support/step-context';

// What the connector conformance suite (conformance.test.ts) needs of one connector kind: how to
// aim it at a host and port, and how to start its peer (a real server from test/peers or a
// stateful fake) for the cases that need an answer. One file per kind; index.ts maps types to
// them, and a registered kind without a fixture fails the suite.

/**
 * The answer timeout the silent-server case sets (ConnectorLimits.answerTimeoutMs) instead of the
 * vendor kinds' own 30 or 60 s, which a test would otherwise sit through.
 */
export const SUITE_ANSWER_TIMEOUT_MS = 2000;

/** A connection and the context it runs with. */
export type Reach = { conn: Connection; ctx: ConnectorContext };

export type Target = {
  host: string;
  port: number;
  /** Private and loopback hosts allowed (config flag and deployment policy both). */
  allowPrivate: boolean;
};

export type ConformanceFixture = {
  /**
   * The kind's connection aimed at host:port with a short timeout; for kinds that reach
   * operator-set endpoints (Google's API root), the context's endpoints point there.
   */
  at(target: Target): Reach;
  /** How long the kind waits for a server that accepts and never answers, in seconds. */
  silentTimeoutSeconds: number;
  /**
   * Kinds with a sink: a sink step's operation writing `sampleRows()` into what `live()` set up
   * (the read-only case sends it too, at a port where nothing listens).
   */
  sinkOperation?: Record<string, unknown>;
  /** Starts the kind's peer with something in it. */
  live(): Promise<Live>;
};

export type Live = {
  /** Works against the peer. */
  good: Reach;
  /** The same peer, with credentials it refuses. */
  badCredentials: Reach;
  /**
   * Schema import round trip: what the imported document must list. With `throughSink`, the
   * suite first writes `sampleRows()` through the kind's own sink (the fixture's sinkOperation).
   */
  roundTrip: { name: string; fields?: string[]; throughSink?: boolean };
  /** Ledger kinds: how many rows the sink operation's target holds now. */
  countRows?(): Promise<number>;
  close(): Promise<void>;
};

/** The deployment policy of a target: private hosts only when it says so. */
export const contextFor = (t: Pick<Target, 'allowPrivate'>, extra: Partial<ConnectorContext> = {}) => ({
  policy: egressPolicy('self_hosted', t.allowPrivate),
  limits: defaultLimits,
  ...extra,
});

/** The rows every sink case writes: an id and a name. */
export const sampleRows = (): Payload => ({
  kind: 'rows',
  columns: [
    { name: 'id', type: 'integer' },
    { name: 'name', type: 'text' },
  ],
  batches: batches<unknown[]>([
    [1, 'ada'],
    [2, 'grace'],
  ]),
});

/** Config as the kind's own schema parses it (defaults applied). */
export const configOf = (type: string, raw: Record<string, unknown>) =>
  connectorFor(type).configSchema.parse(raw) as Record<string, unknown>;

/** A SQL kind (postgres, mysql) aimed at host:port as `user` of `database`. */
export const sqlReach = (type: string, t: Target, database: string, user: string, password: string) => ({
  conn: {
    config: configOf(type, {
      host: t.host,
      port: t.port,
      database,
      user,
      connect_timeout_seconds: 1,
      allow_private_hosts: t.allowPrivate,
    }),
    credentials: { password },
  },
  ctx: contextFor(t),
});
