import type { Payload, SinkResult, SourceOutput, Step, StepContext } from '@sluice/engine';
import type { z } from 'zod';
import type { EgressPolicy } from './egress';
import type { SessionPool } from './session-pool';

// The contract every connector folder implements (ARCHITECTURE.md "Connectors are data").
// Connectors know nothing of HTTP routes or our database: the server hands them a decrypted
// connection and bounds, and stores what they return.

export const dataSourceTypes = [
  'http',
  'ftp',
  'git',
  'postgres',
  'mysql',
  'bigquery',
  'snowflake',
  'google_workspace',
  'salesforce',
  'mongodb',
  'github',
  'gitlab',
  's3',
] as const;
export type DataSourceType = (typeof dataSourceTypes)[number];

/** A query execution's `result_type` (OpenAPI operation `executeQueries`). */
export type ResultType = 'sql' | 'mongodb' | 'http' | 'object_rows' | 'ftp' | 'git' | 's3' | 'workspace_file';

export type ConnectorErrorCode =
  | 'CONNECTION_FAILED'
  | 'HOST_NOT_FOUND'
  | 'TIMEOUT'
  | 'AUTHENTICATION_FAILED'
  | 'PERMISSION_DENIED'
  | 'HEALTH_PATH_NOT_GET'
  | 'REMOTE_ERROR'
  | 'INVALID_OPENAPI'
  | 'OPENAPI_UNREACHABLE'
  | 'PRIVATE_HOST_BLOCKED'
  | 'RESPONSE_TOO_LARGE'
  | 'TOO_MANY_REDIRECTS'
  | 'INVALID_STATEMENT'
  | 'QUERY_FAILED'
  | 'UNSUPPORTED_OPERATION'
  /** A named remote object that does not exist: an S3 bucket or key; a repository, branch, commit or file. */
  | 'NOT_FOUND'
  /** The SSH server's host key is not the pinned one (git over SSH). */
  | 'HOST_KEY_MISMATCH'
  /** The remote's rate limit or quota answered; the message says when to retry. */
  | 'RATE_LIMITED';

/**
 * The one error a connector throws. `message` is shown to users and stored (test_error,
 * schema_diagnostic), so it must already be sanitized: no credential, no raw provider body.
 */
export class ConnectorError extends Error {
  constructor(
    readonly code: ConnectorErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Bounds of docs/connectors/http.md and of query results, passed in so deployments can change them.
 */
export type ConnectorLimits = {
  maxResponseBytes: number; // HTTP response, 50 MiB
  maxRedirects: number; // 5
  maxRows: number; // rows one query execution keeps in its stored result
  maxResultBytes: number; // bytes one stored query result may take
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

export type ConnectorDefinition<C = any, K = any, S = any> = {
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
  /** Statement of a saved query (`{{name}}` placeholders allowed where the connector says). */
  statementSchema: z.ZodType<S> | null;
  resultType: ResultType | null;
  /** Connect and prove access; throws ConnectorError. */
  test?(conn: Connection<C, K>, ctx: ConnectorContext): Promise<void>;
  importSchema?(conn: Connection<C, K>, ctx: ConnectorContext): Promise<SchemaDocument>;
  /** Runs a statement with its parameters sent as bound values, never spliced into text. */
  execute?(
    conn: Connection<C, K>,
    statement: S,
    parameters: Record<string, unknown>,
    ctx: ConnectorContext,
  ): Promise<QueryResult>;
  /**
   * The fields of this kind's pipeline operation, by step kind, checked by validation once a
   * step's ref is bound (the engine accepts any fields for connector operation types).
   */
  pipelineOperation?: { source?: z.ZodType; sink?: z.ZodType };
  /** Branches of a git-compatible source (`GET …/data-sources/{data_source}/branches`). */
  listBranches?(conn: Connection<C, K>, ctx: ConnectorContext): Promise<Branch[]>;
  /** Pipeline source step: streams what the operation reads; never buffers a whole dataset. */
  read?(conn: Connection<C, K>, step: StepContext, ctx: ConnectorContext): Promise<SourceOutput>;
  /**
   * Pipeline sink step: what earlier attempts committed under commit keys starting with
   * `keyPrefix` (read from the sink's own ledger), or null. Kinds without a ledger omit it.
   */
  committedWrites?(
    conn: Connection<C, K>,
    step: Step,
    keyPrefix: string,
    ctx: ConnectorContext,
  ): Promise<SinkResult | null>;
  /** Git-backed kinds: what proof observations read (docs/proof.md). */
  proof?: ProofCapability<C, K>;
  /** Pipeline sink step: writes the upstream payload; resolves once it is committed. */
  write?(
    conn: Connection<C, K>,
    input: Payload,
    step: StepContext,
    ctx: ConnectorContext,
  ): Promise<SinkResult>;
};

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
  /** Creates or updates the named check on the commit; kinds without checks leave it out. */
  publish?(conn: Connection<C, K>, ctx: ConnectorContext, check: ProofCheck): Promise<{ url: string | null }>;
};
