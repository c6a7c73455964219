import { z } from 'zod';

// Parsed once at boot; everything else receives the result as an argument.
const addr = z
  .string()
  .regex(/^[^:]+:\d{1,5}$/, 'expected host:port')
  .transform((v) => {
    const i = v.lastIndexOf(':');
    return { host: v.slice(0, i), port: Number(v.slice(i + 1)) };
  });

const intFrom = (def: number) => z.coerce.number().int().positive().default(def);

export const configSchema = z.object({
  SLUICE_API_ADDR: z.string().default('127.0.0.1:8080').pipe(addr),
  SLUICE_APP_ADDR: z.string().default('127.0.0.1:8081').pipe(addr),
  SLUICE_DATA_DIR: z.string().min(1).default('./.sluice'),
  DATABASE_URL: z.string().url().optional(),
  // Behind a pooler in transaction mode (docs/operations.md "Behind PgBouncer"): no named
  // prepared statements, and LISTEN only on DATABASE_DIRECT_URL (a session of its own), else polling.
  SLUICE_DB_POOLER: z.enum(['none', 'transaction']).default('none'),
  DATABASE_DIRECT_URL: z.string().url().optional(),
  // A hot standby of the store that API hosts read the runs and events lists and run logs from
  // while it is at most SLUICE_READ_MAX_LAG_MS behind (docs/operations.md "Read replicas").
  DATABASE_READ_URL: z.string().url().optional(),
  SLUICE_READ_MAX_LAG_MS: z.coerce.number().int().min(100).max(600_000).default(1000),
  SLUICE_DEPLOYMENT: z.enum(['hosted', 'self_hosted']).default('self_hosted'),
  SLUICE_MASTER_KEY: z.string().optional(),
  SLUICE_SMTP_URL: z.string().url().optional(),
  SLUICE_SMTP_FROM: z.string().default('Sluice <no-reply@sluice.local>'),
  SLUICE_PUBLIC_URL: z.string().url().optional(),
  SLUICE_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SLUICE_RATE_LIMIT_PER_TOKEN: intFrom(600),
  // How long an API host serves an API key it has read from memory; 0 reads it for every request.
  SLUICE_API_KEY_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  SLUICE_RATE_LIMIT_PUBLIC: intFrom(20),
  SLUICE_RATE_LIMIT_WINDOW_MS: intFrom(60_000),
  SLUICE_BODY_LIMIT_BYTES: intFrom(1024 * 1024),
  // App-host event streams (docs/operations.md "Event streams on the app host"): how many may be open
  // per browser session and per user, and how often an open one re-checks its session and access.
  SLUICE_STREAMS_PER_SESSION: intFrom(8),
  SLUICE_STREAMS_PER_USER: intFrom(16),
  SLUICE_STREAM_RECHECK_SECONDS: z.coerce.number().min(0.05).max(60).default(5),
  // Every response also validated with zod and its fast serialization compared with
  // JSON.stringify's (a difference answers 500): on in the test harness, off in production.
  SLUICE_CHECK_RESPONSES: z.enum(['0', '1', 'false', 'true']).default('0'),
  // A worker on PostgreSQL loads the deployed pipelines' code before its first job
  // (docs/operations.md "A worker's warm start"); off: each run loads what it needs on first use.
  SLUICE_WORKER_WARM_START: z.enum(['on', 'off']).default('on'),
  SLUICE_INVITATION_TTL_HOURS: intFrom(24 * 7),
  SLUICE_VERIFICATION_TTL_HOURS: intFrom(48),
  // At least two: the startup migration holds one connection (its advisory lock) and migrates
  // on another; with one it would wait for itself until the pool's timeout.
  SLUICE_DB_POOL_SIZE: z.coerce
    .number()
    .int()
    .min(2, 'must be at least 2 (the startup migration uses two connections)')
    .default(10),
  // Connections `serve` and `worker` open at start and keep open, warm (unset: the pool's size);
  // other processes open theirs on demand.
  SLUICE_DB_POOL_MIN: z.coerce.number().int().min(0).optional(),
  // Unset: 2, or 0.5 when polling is how jobs are found (a transaction pooler without a direct URL).
  SLUICE_QUEUE_POLL_SECONDS: z.coerce.number().min(0.5).optional(),
  SLUICE_RUN_TIMEOUT_SECONDS: intFrom(3600),
  SLUICE_RUN_LEASE_SECONDS: z.coerce.number().int().min(2).default(30),
  // Days run log lines are kept (whole months are dropped once older); 0 keeps them.
  SLUICE_RUN_LOG_RETENTION_DAYS: z.coerce.number().int().min(0).default(0),
  // Runs failed by a retryable connector error (docs/runs.md "Retries"): how many more attempts,
  // and the waits before them (the last one repeats).
  SLUICE_RUN_RETRY_ATTEMPTS: z.coerce.number().int().min(0).max(10).default(2),
  SLUICE_RUN_RETRY_DELAYS_SECONDS: z
    .string()
    .default('10,60')
    .transform((v) => v.split(',').map((d) => Number(d.trim())))
    .pipe(z.array(z.number().int().min(0).max(86_400)).min(1)),
  // Alerting (docs/alerting.md): repeat window, reopen quiet time, hourly cap, retry schedule.
  SLUICE_ALERT_REPEAT_HOURS: z.coerce.number().positive().default(4),
  SLUICE_ALERT_REOPEN_QUIET_MINUTES: z.coerce.number().min(0).default(30),
  SLUICE_ALERT_DESTINATION_HOURLY_CAP: intFrom(30),
  SLUICE_ALERT_RETRY_DELAYS_SECONDS: z
    .string()
    .default('60,300,1200,3600')
    .transform((v) => v.split(',').map((d) => Number(d.trim())))
    .pipe(z.array(z.number().min(0)).min(1)),
  // Change data capture slot safety (docs/cdc.md "Slot safety"): retained log over this many
  // bytes, or no committed position for this many minutes, raises an alert.
  SLUICE_CDC_LAG_ALERT_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(1024 ** 3),
  SLUICE_CDC_INACTIVE_ALERT_MINUTES: z.coerce.number().int().min(1).default(60),
  // Schedule tick of every API host and worker; 0 turns it off in this process.
  SLUICE_TRIGGER_TICK_SECONDS: z.coerce.number().min(0).default(5),
  // Operator settings for connector egress: private CIDRs every data source may reach
  // (self-hosted only), and another root for Google's APIs (a proxy or a test fake).
  SLUICE_EGRESS_ALLOW_CIDRS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((c) => c.trim())
        .filter((c) => c !== ''),
    )
    .pipe(z.array(z.cidrv4().or(z.cidrv6()))),
  SLUICE_GOOGLE_API_ROOT: z.url({ protocol: /^https?$/ }).optional(),
  // OAuth apps of the hosted git providers (docs/operations.md "OAuth"). Unset client id: the
  // provider cannot be authorized on this deployment.
  SLUICE_OAUTH_REDIRECT_URL: z.string().url().optional(),
  SLUICE_OAUTH_STATE_TTL_SECONDS: intFrom(600),
  SLUICE_GITHUB_OAUTH_CLIENT_ID: z.string().optional(),
  SLUICE_GITHUB_OAUTH_CLIENT_SECRET: z.string().optional(),
  SLUICE_GITHUB_OAUTH_URL: z.string().url().default('https://github.com'),
  SLUICE_GITHUB_API_URL: z.string().url().default('https://api.github.com'),
  SLUICE_GITHUB_OAUTH_SCOPES: z.string().default('repo read:user'),
  SLUICE_GITLAB_OAUTH_CLIENT_ID: z.string().optional(),
  SLUICE_GITLAB_OAUTH_CLIENT_SECRET: z.string().optional(),
  SLUICE_GITLAB_URL: z.string().url().default('https://gitlab.com'),
  SLUICE_GITLAB_OAUTH_SCOPES: z.string().default('api read_user'),
});

export type RawConfig = z.input<typeof configSchema>;
export type ParsedEnv = z.output<typeof configSchema>;

export type Config = {
  api: { host: string; port: number };
  app: { host: string; port: number };
  dataDir: string;
  databaseUrl: string | undefined;
  /**
   * The store's connections go through a pooler in transaction mode: no session state survives a
   * transaction. `directUrl` (optional) reaches the server itself, for LISTEN.
   */
  dbPooler: { mode: 'none' | 'transaction'; directUrl: string | undefined };
  /** A hot standby API hosts read lists from, and how far behind it may be (db/replica.ts). */
  reads: { url: string; maxLagMs: number } | null;
  deployment: 'hosted' | 'self_hosted';
  masterKey: string | undefined;
  smtpUrl: string | undefined;
  smtpFrom: string;
  publicUrl: string;
  logLevel: ParsedEnv['SLUICE_LOG_LEVEL'];
  rateLimit: { perToken: number; publicPerAddress: number; windowMs: number };
  /** SLUICE_API_KEY_CACHE_MS: how long another host's change to a key may take to reach this one. */
  apiKeyCacheMs: number;
  bodyLimitBytes: number;
  /** App-host event streams: caps on open streams, and the interval of their access re-check. */
  streams: { perSession: number; perUser: number; recheckMs: number };
  /** SLUICE_CHECK_RESPONSES: zod-validate every response and compare the serializers' bytes. */
  checkResponses: boolean;
  /** SLUICE_WORKER_WARM_START: a worker on PostgreSQL loads the deployed pipelines' code first. */
  workerWarmStart: boolean;
  invitationTtlHours: number;
  verificationTtlHours: number;
  dbPoolSize: number;
  /** SLUICE_DB_POOL_MIN: the pool's warm floor when the process asks for one (unset: dbPoolSize). */
  dbPoolMin: number | undefined;
  queuePollSeconds: number;
  /** Pipeline runs: wall-clock limit, and how long a worker's claim lasts without a heartbeat. */
  runs: {
    timeoutSeconds: number;
    leaseSeconds: number;
    logRetentionDays: number;
    /** Attempts after the first for a run failed by a retryable error, and the waits before them. */
    retry: { attempts: number; delaysSeconds: number[] };
  };
  triggerTickSeconds: number;
  /** Connector egress: the operator's private CIDR allowlist and endpoint overrides. */
  egress: { allowCidrs: string[]; googleApiRoot: string | undefined };
  oauth: OAuthConfig;
  /** Slot safety bounds (docs/cdc.md "Slot safety"). */
  cdc: { lagAlertBytes: number; inactiveAlertMinutes: number };
  alerts: {
    repeatHours: number;
    reopenQuietMinutes: number;
    destinationHourlyCap: number;
    /** Delay before try 2, 3, …; its length + 1 is the number of tries. */
    retryDelaysSeconds: number[];
  };
};

export type OAuthProviderConfig = {
  clientId: string | undefined;
  clientSecret: string | undefined;
  /** Where the user grants access (browser). */
  authorizeUrl: string;
  tokenUrl: string;
  /** REST API root: account lookup (and GitHub's token revocation). */
  apiUrl: string;
  scopes: string[];
};

export type OAuthConfig = {
  /** The public address of GET /oauth/callback, registered with each OAuth app. */
  redirectUrl: string;
  stateTtlSeconds: number;
  github: OAuthProviderConfig;
  gitlab: OAuthProviderConfig & { revokeUrl: string };
};

const trimSlash = (u: string) => u.replace(/\/+$/, '');
const scopeList = (v: string) => v.split(/[\s,]+/).filter(Boolean);

export class ConfigError extends Error {}

export function parseConfig(source: Record<string, string | undefined>): Config {
  const picked: Record<string, string> = {};
  for (const key of Object.keys(configSchema.shape)) {
    const v = source[key];
    if (v !== undefined && v !== '') picked[key] = v;
  }
  const r = configSchema.safeParse(picked);
  if (!r.success) {
    const lines = r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = r.data;
  if (e.SLUICE_DB_POOLER === 'transaction' && !e.DATABASE_URL)
    throw new ConfigError(
      'invalid configuration:\n  SLUICE_DB_POOLER: transaction needs DATABASE_URL (the embedded store has no pooler)',
    );
  if (e.DATABASE_READ_URL && !e.DATABASE_URL)
    throw new ConfigError(
      'invalid configuration:\n  DATABASE_READ_URL: a read replica needs DATABASE_URL (the embedded store has none)',
    );
  return {
    api: e.SLUICE_API_ADDR,
    app: e.SLUICE_APP_ADDR,
    dataDir: e.SLUICE_DATA_DIR,
    databaseUrl: e.DATABASE_URL,
    dbPooler: { mode: e.SLUICE_DB_POOLER, directUrl: e.DATABASE_DIRECT_URL },
    reads: e.DATABASE_READ_URL ? { url: e.DATABASE_READ_URL, maxLagMs: e.SLUICE_READ_MAX_LAG_MS } : null,
    deployment: e.SLUICE_DEPLOYMENT,
    masterKey: e.SLUICE_MASTER_KEY,
    smtpUrl: e.SLUICE_SMTP_URL,
    smtpFrom: e.SLUICE_SMTP_FROM,
    publicUrl: e.SLUICE_PUBLIC_URL ?? `http://${e.SLUICE_APP_ADDR.host}:${e.SLUICE_APP_ADDR.port}`,
    logLevel: e.SLUICE_LOG_LEVEL,
    rateLimit: {
      perToken: e.SLUICE_RATE_LIMIT_PER_TOKEN,
      publicPerAddress: e.SLUICE_RATE_LIMIT_PUBLIC,
      windowMs: e.SLUICE_RATE_LIMIT_WINDOW_MS,
    },
    apiKeyCacheMs: e.SLUICE_API_KEY_CACHE_MS,
    bodyLimitBytes: e.SLUICE_BODY_LIMIT_BYTES,
    streams: {
      perSession: e.SLUICE_STREAMS_PER_SESSION,
      perUser: e.SLUICE_STREAMS_PER_USER,
      recheckMs: Math.round(e.SLUICE_STREAM_RECHECK_SECONDS * 1000),
    },
    checkResponses: e.SLUICE_CHECK_RESPONSES === '1' || e.SLUICE_CHECK_RESPONSES === 'true',
    workerWarmStart: e.SLUICE_WORKER_WARM_START === 'on',
    invitationTtlHours: e.SLUICE_INVITATION_TTL_HOURS,
    verificationTtlHours: e.SLUICE_VERIFICATION_TTL_HOURS,
    dbPoolSize: e.SLUICE_DB_POOL_SIZE,
    dbPoolMin: e.SLUICE_DB_POOL_MIN,
    queuePollSeconds:
      e.SLUICE_QUEUE_POLL_SECONDS ??
      (e.SLUICE_DB_POOLER === 'transaction' && !e.DATABASE_DIRECT_URL ? 0.5 : 2),
    runs: {
      timeoutSeconds: e.SLUICE_RUN_TIMEOUT_SECONDS,
      leaseSeconds: e.SLUICE_RUN_LEASE_SECONDS,
      logRetentionDays: e.SLUICE_RUN_LOG_RETENTION_DAYS,
      retry: { attempts: e.SLUICE_RUN_RETRY_ATTEMPTS, delaysSeconds: e.SLUICE_RUN_RETRY_DELAYS_SECONDS },
    },
    triggerTickSeconds: e.SLUICE_TRIGGER_TICK_SECONDS,
    egress: { allowCidrs: e.SLUICE_EGRESS_ALLOW_CIDRS, googleApiRoot: e.SLUICE_GOOGLE_API_ROOT },
    cdc: {
      lagAlertBytes: e.SLUICE_CDC_LAG_ALERT_BYTES,
      inactiveAlertMinutes: e.SLUICE_CDC_INACTIVE_ALERT_MINUTES,
    },
    alerts: {
      repeatHours: e.SLUICE_ALERT_REPEAT_HOURS,
      reopenQuietMinutes: e.SLUICE_ALERT_REOPEN_QUIET_MINUTES,
      destinationHourlyCap: e.SLUICE_ALERT_DESTINATION_HOURLY_CAP,
      retryDelaysSeconds: e.SLUICE_ALERT_RETRY_DELAYS_SECONDS,
    },
    oauth: {
      redirectUrl:
        e.SLUICE_OAUTH_REDIRECT_URL ??
        `http://${e.SLUICE_API_ADDR.host}:${e.SLUICE_API_ADDR.port}/oauth/callback`,
      stateTtlSeconds: e.SLUICE_OAUTH_STATE_TTL_SECONDS,
      github: {
        clientId: e.SLUICE_GITHUB_OAUTH_CLIENT_ID,
        clientSecret: e.SLUICE_GITHUB_OAUTH_CLIENT_SECRET,
        authorizeUrl: `${trimSlash(e.SLUICE_GITHUB_OAUTH_URL)}/login/oauth/authorize`,
        tokenUrl: `${trimSlash(e.SLUICE_GITHUB_OAUTH_URL)}/login/oauth/access_token`,
        apiUrl: trimSlash(e.SLUICE_GITHUB_API_URL),
        scopes: scopeList(e.SLUICE_GITHUB_OAUTH_SCOPES),
      },
      gitlab: {
        clientId: e.SLUICE_GITLAB_OAUTH_CLIENT_ID,
        clientSecret: e.SLUICE_GITLAB_OAUTH_CLIENT_SECRET,
        authorizeUrl: `${trimSlash(e.SLUICE_GITLAB_URL)}/oauth/authorize`,
        tokenUrl: `${trimSlash(e.SLUICE_GITLAB_URL)}/oauth/token`,
        revokeUrl: `${trimSlash(e.SLUICE_GITLAB_URL)}/oauth/revoke`,
        apiUrl: `${trimSlash(e.SLUICE_GITLAB_URL)}/api/v4`,
        scopes: scopeList(e.SLUICE_GITLAB_OAUTH_SCOPES),
      },
    },
  };
}

/** The only place that reads process.env. */
export function loadConfig(overrides: Record<string, string | undefined> = {}): Config {
  // An override that was not given (an absent flag) leaves the environment's value in place.
  const given = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  return parseConfig({ ...process.env, ...given });
}
