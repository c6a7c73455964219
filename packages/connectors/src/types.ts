import type { CdcOperation, Payload, SinkResult, SourceOutput, Step, StepContext } from '@sluice/engine';
import type { z } from 'zod';
import type { CaptureFinding, CaptureRetention, CaptureStatus } from './capture-status';
import type { EgressPolicy } from './egress';
import { ConnectorError } from './errors';
import type { SessionPool } from './session-pool';

export type { CaptureFinding, CaptureRetention, CaptureStatus } from './capture-status';
export { ConnectorError, type ConnectorErrorCode, connectorErrorCodes } from './errors';

// The contract every connector folder implements (docs/architecture.md "Connectors"). A
// connector is a required core plus the capability objects it offers; every member of a
// capability is required, so a call site asks for the capability (capabilityOf) and never
// checks a method. Connectors know nothing of HTTP routes or our database: the server hands
// them a decrypted connection and bounds, and stores what they return.

/** A data source type: the `type` of a registered connector (registry.ts lists them). */
export type DataSourceType = string;

/** A query execution's `result_type` (OpenAPI operation `executeQueries`). */
export type ResultType = 'sql' | 'mongodb' | 'http' | 'object_rows' | 'ftp' | 'git' | 's3' | 'workspace_file';

/**
 * Bounds of docs/connectors/http.md and of query results, passed in so deployments can change them.
 */
export type ConnectorLimits = {
  maxResponseBytes: number; // HTTP response, 50 MiB
  maxRedirects: number; // 5
  maxRows: number; // rows one query execution keeps in its stored result
  maxResultBytes: number; // bytes one stored query result may take
  /**
   * How long a vendor API request waits for an answer where the kind fixes a bound of its own
   * (GitHub and GitLab 30 s, a Salesforce connection test 30 s, Google Workspace 60 s); unset,
   * the kind's own bound applies. The conformance suite shortens it rather than wait.
   */
  answerTimeoutMs?: number;
};

export const defaultLimits: ConnectorLimits = {
  maxResponseBytes: 50 * 1024 * 1024,
  maxRedirects: 5,
  maxRows: 1000,
  maxResultBytes: 1024 * 1024,
};

export type ConnectorContext = {
  policy: EgressPolicy;
  limits: ConnectorLimits;
  signal?: AbortSignal;
  /** The data source is read-only: `execute` must not be able to write through it. */
  readOnly?: boolean;
  /**
   * Operator-set API roots that replace a vendor's fixed endpoints (a proxy, a test fake).
   * Server settings, never data-source config: a user cannot send credentials elsewhere.
   */
  endpoints?: { googleApiRoot?: string };
  /**
   * OAuth kinds: asks the server for a newer access token after the remote answered 401.
   * Resolves null when there is none (the caller then reports AUTHENTICATION_FAILED); throws
   * ConnectorError when the refresh itself was refused.
   */
  refreshCredentials?: () => Promise<Record<string, unknown> | null>;
  /**
   * Pipeline sinks: this write's identity in the run (the same on every attempt). A SQL sink
   * records it in its own transaction and, finding it already there, writes nothing again.
   */
  commitKey?: string;
  /**
   * Pipeline runs: the run's attempt (1 first). A change-data-capture read of a later attempt
   * repeats what a lost attempt handed on, if it got that far (docs/cdc.md "Exactly once").
   */
  attempt?: number;
  /**
   * Change-data-capture reads: the captured tables as the source describes them at the start of
   * the read, before anything is handed on (docs/cdc.md "Schema changes"). The server compares
   * them with the data source's imported schema. A rejection stops the read: it is rethrown
   * unchanged, nothing is handed on and the position does not move.
   */
  onCapturedSchema?: (tables: CapturedSchemaTable[]) => Promise<void>;
  /**
   * Pipeline runs on a worker: relational sessions are taken from and handed back to this
   * process's pool (session-pool.ts) instead of being opened and closed per step.
   */
  sessions?: SessionPool;
};

/** A data source as a connector sees it: validated config and decrypted credentials. */
export type Connection<C = Record<string, unknown>, K = Record<string, unknown>> = {
  config: C;
  credentials: K | null;
};

export type Column = { name: string; type: string };

/**
 * One captured table as a change-data-capture read saw it: `schema` (PostgreSQL) or database
 * (MySQL), name, and the columns with their type names; `columns` null when the table is gone.
 */
export type CapturedSchemaTable = { schema: string; name: string; columns: Column[] | null };

/** What schema import stores in `data_source.schema` (field `schema` of OpenAPI `getDataSources`). */
export type SchemaDocument =
  | {
      schema_type: 'relational';
      type: DataSourceType;
      tables: { schema: string; name: string; columns: Column[] }[];
    }
  | {
      schema_type: 'openapi';
      type: 'http';
      title: string | null;
      version: string | null;
      operations: HttpOperationSummary[];
    }
  | { schema_type: 'document'; type: DataSourceType; collections: { name: string; fields: Column[] }[] }
  | {
      schema_type: 'file';
      type: DataSourceType;
      files: { name: string; fields: Column[]; mime_type?: string; resource_id?: string }[];
      diagnostics?: { name: string; target: string; severity: string; code: string; message: string }[];
    }
  | { schema_type: 'empty'; type: DataSourceType };

export type HttpOperationSummary = {
  operation_id: string | null;
  method: string;
  path: string;
  summary: string | null;
  tags: string[];
  parameters: { name: string; in: string; required: boolean }[];
  /** Fields of the success responses, `200.data[].id`, for drift reports. */
  response_fields?: { name: string; type: string }[];
};

/** A branch as the branch listing shows it: the name without refs/heads/. */
export type Branch = { name: string; is_default: boolean };

/** One query execution's outcome, bounded by `limits`. */
export type QueryResult = {
  result_type: ResultType;
  payload: Record<string, unknown>;
  row_count: number | null;
  truncated: boolean;
};

/** What every kind has. */
export type ConnectorCore<C = any, K = any> = {
  type: DataSourceType;
  /** Human label for docs and errors. */
  label: string;
  configSchema: z.ZodType<C>;
  /** Write-only credentials; `null` when the kind takes none (OAuth kinds connect later). */
  credentialsSchema: z.ZodType<K> | null;
  credentialsRequired: boolean;
  /**
   * Config fields that decide where the credentials are sent (host, port, URLs; [] when only
   * fixed vendor or operator-set endpoints are reached). Changing one needs the credentials
   * again, so a stored secret never follows a destination someone else chose.
   */
  credentialDestination: readonly string[];
  /** The CRM kind is read-only unless the user says otherwise. */
  defaultReadOnly: boolean;
  /** Connect and prove access; throws ConnectorError. */
  test(conn: Connection<C, K>, ctx: ConnectorContext): Promise<void>;
};

/** Saved queries: a statement schema and its execution. */
export type QueryCapability<C = any, K = any, S = any> = {
  /** Statement of a saved query (`{{name}}` placeholders allowed where the connector says). */
  statementSchema: z.ZodType<S>;
  resultType: ResultType;
  /** Runs a statement with its parameters sent as bound values, never spliced into text. */
  execute(
    conn: Connection<C, K>,
    statement: S,
    parameters: Record<string, unknown>,
    ctx: ConnectorContext,
  ): Promise<QueryResult>;
};

/** Pipeline source steps. */
export type SourceCapability<C = any, K = any> = {
  /**
   * The fields of a source step's operation, checked by validation once the step's ref is
   * bound; null when the kind checks them itself at run time (the engine accepts any fields).
   */
  operation: z.ZodType | null;
  /** Streams what the operation reads; never buffers a whole dataset. */
  read(conn: Connection<C, K>, step: StepContext, ctx: ConnectorContext): Promise<SourceOutput>;
  /**
   * Loads the code `read` runs, its driver included, without connecting anywhere: what `read`
   * would otherwise load on its first call; a kind may also run its hottest code once on
   * made-up values (MySQL's COPY encoders). A worker calls it before its first job for the
   * kinds the deployed pipelines use (docs/operations.md#a-workers-warm-start).
   */
  load(): Promise<void>;
};

/** Pipeline sink steps. */
export type SinkCapability<C = any, K = any> = {
  /** As SourceCapability.operation, for sink steps. */
  operation: z.ZodType | null;
  /** Writes the upstream payload; resolves once it is committed. */
  write(
    conn: Connection<C, K>,
    input: Payload,
    step: StepContext,
    ctx: ConnectorContext,
  ): Promise<SinkResult>;
  /** As SourceCapability.load, for `write`. */
  load(): Promise<void>;
};

/** Kinds whose pipeline sessions a worker keeps between runs (session-pool.ts). */
export type SessionsCapability<C = any, K = any> = {
  /**
   * Opens in the background the session a step on this data source will take from
   * `ctx.sessions`, unless one is idle or opening already: a run warms its sinks' sessions
   * while its source opens (docs/operations.md, "Connections to data sources").
   * Returns at once and never throws; without `ctx.sessions` it does nothing.
   */
  warm(conn: Connection<C, K>, ctx: ConnectorContext, opts: { readOnly: boolean }): void;
};

/** Sinks that record each write under its commit key, in the target's own transaction. */
export type LedgerCapability<C = any, K = any> = {
  /** What earlier attempts committed under commit keys starting with `keyPrefix`, or null. */
  committedWrites(
    conn: Connection<C, K>,
    step: Step,
    keyPrefix: string,
    ctx: ConnectorContext,
  ): Promise<SinkResult | null>;
};

/** Schema import: what `data_source.schema` holds (field `schema` of OpenAPI `getDataSources`). */
export type DiscoverCapability<C = any, K = any> = {
  importSchema(conn: Connection<C, K>, ctx: ConnectorContext): Promise<SchemaDocument>;
};

/** Git-compatible sources (`GET …/data-sources/{data_source}/branches`). */
export type BranchesCapability<C = any, K = any> = {
  listBranches(conn: Connection<C, K>, ctx: ConnectorContext): Promise<Branch[]>;
};

/** Hosted repositories that post a check on a commit (proof receipts; docs/proof.md). */
export type ChecksCapability<C = any, K = any> = {
  /** Creates or updates the named check on the commit. */
  publish(conn: Connection<C, K>, ctx: ConnectorContext, check: ProofCheck): Promise<{ url: string | null }>;
};

/**
 * Change data capture (docs/cdc.md). A capture is named by the server, one per pipeline
 * source step and environment (`sluice_…`); on PostgreSQL it is a replication slot and a
 * publication of the same name, on MySQL/MariaDB a position in the binlog (nothing on the
 * server to drop).
 *
 * The rows a read hands on: first the metadata columns `_op` (`insert`, `update` or `delete`;
 * snapshot rows are `insert`), `_table` (the table as the operation names it), `_position`
 * (the change's position as text), `_committed_at` (the source commit time, ISO 8601 UTC) and
 * `_unchanged` (a JSON array of the columns whose values the source did not send, PostgreSQL's
 * unchanged TOAST values; null when all were sent), then the union of the tables' columns in
 * table order with their exact values (a delete carries at least the key). Rows come in
 * source commit order, a transaction's changes in their order.
 */
export type ChangesCapability<C = any, K = any> = {
  /**
   * Validation: whether the tables can be captured (they exist, have a key or replica
   * identity, the server's settings allow capture). A problem is a finding naming the table
   * and the fix, never a throw; a connection failure throws ConnectorError.
   */
  check(conn: Connection<C, K>, op: CdcOperation, ctx: ConnectorContext): Promise<CaptureFinding[]>;
  /**
   * Reads from the committed position (`step.lowerBoundCursor`, the checkpoint text a former
   * read's `nextCursor` gave; null on the first run) up to the server's position when the read
   * started, or less by `max_changes`/`max_seconds` at a transaction boundary. First confirms
   * the committed position on the server (a PostgreSQL slot advances to it, never past it).
   * `nextCursor()` resolves with the position to commit once the payload was consumed.
   */
  read(
    conn: Connection<C, K>,
    step: StepContext,
    capture: string,
    ctx: ConnectorContext,
  ): Promise<SourceOutput>;
  /** The captures on the server whose names start with `prefix`, with their lag. */
  captures(conn: Connection<C, K>, prefix: string, ctx: ConnectorContext): Promise<CaptureStatus[]>;
  /** Drops what the capture created on the server; one that does not exist is no error. */
  release(conn: Connection<C, K>, capture: string, ctx: ConnectorContext): Promise<void>;
  /**
   * A connector that keeps nothing on the server for a capture (MySQL: a binlog position): how
   * far a committed checkpoint text is behind the server's end, and that position as text.
   */
  positionLag?(
    conn: Connection<C, K>,
    checkpoint: string,
    ctx: ConnectorContext,
  ): Promise<{ lag_bytes: number | null; confirmed_position: string; retention?: CaptureRetention }>;
};

export type Capabilities<C = any, K = any, S = any> = {
  query: QueryCapability<C, K, S>;
  source: SourceCapability<C, K>;
  sink: SinkCapability<C, K>;
  ledger: LedgerCapability<C, K>;
  sessions: SessionsCapability<C, K>;
  discover: DiscoverCapability<C, K>;
  branches: BranchesCapability<C, K>;
  /** Git-backed kinds: what proof observations read (docs/proof.md). */
  proof: ProofCapability<C, K>;
  checks: ChecksCapability<C, K>;
  changes: ChangesCapability<C, K>;
};

export type CapabilityName = keyof Capabilities;

/** A connector: the core, plus the capabilities it offers. */
export type ConnectorDefinition<C = any, K = any, S = any> = ConnectorCore<C, K> &
  Partial<Capabilities<C, K, S>>;

/** The `allow_private_hosts` flag lives in config for every kind that reaches a host. */
export function allowsPrivateHosts(config: unknown): boolean {
  return (
    typeof config === 'object' &&
    config !== null &&
    (config as { allow_private_hosts?: unknown }).allow_private_hosts === true
  );
}

/** A sink on a read-only data source is refused before anything connects. */
export function assertWritable(ctx: ConnectorContext): void {
  if (ctx.readOnly)
    throw new ConnectorError(
      'PERMISSION_DENIED',
      'the data source is read-only: a sink cannot write through it',
    );
}

/** One file of a proof snapshot: hashes of its bytes, and its fields when it is CSV or JSON. */
export type ProofFile = {
  path: string;
  sha256: string;
  git_blob: string;
  size: number;
  /** Null for a file that is not tabular; empty when a tabular file could not be read. */
  fields: Column[] | null;
  readable: boolean;
};

/** What a repository holds at one commit, for the paths a proof observation asked about. */
export type ProofSnapshot = {
  repository_id: string;
  commit_sha: string;
  tree_sha: string | null;
  files: ProofFile[];
  /** Asked-for paths that do not exist at the commit. */
  missing: string[];
};

/** A check on a commit: a GitHub check run or commit status, a GitLab commit status. */
export type ProofCheck = {
  name: string;
  commit_sha: string;
  conclusion: 'success' | 'neutral' | 'failure';
  title: string;
  summary: string;
  details_url: string;
};

export type ProofCapability<C = any, K = any> = {
  /** The provider's immutable id of the repository (root commit SHA for plain git). */
  repositoryId(conn: Connection<C, K>, ctx: ConnectorContext): Promise<string>;
  /** Paths are relative to the data source's base path; a directory stands for its files. */
  snapshot(
    conn: Connection<C, K>,
    ctx: ConnectorContext,
    at: { commit?: string; ref?: string; paths: string[] },
  ): Promise<ProofSnapshot>;
};
