import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { id, timestamps, ts } from './columns';
import { organizations } from './organizations';

const orgRef = () =>
  uuid('organization_id')
    .notNull()
    .references(() => organizations.id, { onDelete: 'cascade' });

export const projects = pgTable(
  'projects',
  {
    id: id(),
    organizationId: orgRef(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    ...timestamps(),
  },
  (t) => [uniqueIndex('projects_org_slug_uq').on(t.organizationId, t.slug)],
);

export const environments = pgTable(
  'environments',
  {
    id: id(),
    organizationId: orgRef(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    color: text('color').notNull().default('gray'),
    protected: boolean('protected').notNull().default(false),
    /** Run time limit of pipeline runs here; null means the deployment's default. */
    runTimeoutSeconds: integer('run_timeout_seconds'),
    deletedAt: ts('deleted_at'),
    deleteReason: text('delete_reason'),
    ...timestamps(),
  },
  (t) => [uniqueIndex('environments_org_slug_uq').on(t.organizationId, t.slug)],
);

export const projectEnvironments = pgTable(
  'project_environments',
  {
    id: id(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    environmentId: uuid('environment_id')
      .notNull()
      .references(() => environments.id, { onDelete: 'cascade' }),
    isDefault: boolean('is_default').notNull().default(false),
    ...timestamps(),
  },
  (t) => [uniqueIndex('project_environments_uq').on(t.projectId, t.environmentId)],
);

/** Data-encryption keys, each wrapped by the master key; `kid` is stored beside every value. */
export const encryptionKeys = pgTable('encryption_keys', {
  kid: text('kid').primaryKey(),
  wrappedKey: text('wrapped_key').notNull(),
  active: boolean('active').notNull().default(false),
  createdAt: ts('created_at').notNull().defaultNow(),
  retiredAt: ts('retired_at'),
});

export const environmentSecrets = pgTable(
  'environment_secrets',
  {
    id: id(),
    organizationId: orgRef(),
    environmentId: uuid('environment_id')
      .notNull()
      .references(() => environments.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    description: text('description'),
    kid: text('kid').notNull(),
    ciphertext: text('ciphertext').notNull(),
    ...timestamps(),
  },
  (t) => [uniqueIndex('environment_secrets_uq').on(t.environmentId, t.key)],
);

export const runtimeVariables = pgTable(
  'runtime_variables',
  {
    id: id(),
    organizationId: orgRef(),
    environmentId: uuid('environment_id')
      .notNull()
      .references(() => environments.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    value: text('value').notNull(),
    description: text('description'),
    ...timestamps(),
  },
  (t) => [uniqueIndex('runtime_variables_uq').on(t.environmentId, t.key)],
);

export const dataSources = pgTable(
  'data_sources',
  {
    id: id(),
    organizationId: orgRef(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    type: text('type').notNull(),
    config: jsonb('config').$type<Record<string, unknown>>().notNull(),
    isActive: boolean('is_active').notNull().default(true),
    readOnly: boolean('read_only').notNull().default(false),
    organizationGitlabConnection: boolean('organization_gitlab_connection').notNull().default(false),
    schemaStatus: text('schema_status').notNull().default('not_imported'),
    schema: jsonb('schema').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    schemaDiagnostic: jsonb('schema_diagnostic').$type<{ code: string; message: string } | null>(),
    schemaImportStartedAt: ts('schema_import_started_at'),
    schemaImportFinishedAt: ts('schema_import_finished_at'),
    connectionRevision: bigint('connection_revision', { mode: 'number' }).notNull().default(1),
    lastTestedAt: ts('last_tested_at'),
    testError: text('test_error'),
    ...timestamps(),
  },
  (t) => [uniqueIndex('data_sources_org_slug_uq').on(t.organizationId, t.slug)],
);

export const dataSourceCredentials = pgTable(
  'data_source_credentials',
  {
    id: id(),
    organizationId: orgRef(),
    dataSourceId: uuid('data_source_id')
      .notNull()
      .references(() => dataSources.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull(),
    status: text('status').notNull(),
    kid: text('kid'),
    ciphertext: text('ciphertext'),
    oauth: jsonb('oauth').$type<Record<string, unknown> | null>(),
    ...timestamps(),
  },
  (t) => [index('data_source_credentials_ds_idx').on(t.dataSourceId, t.createdAt)],
);

export const queries = pgTable(
  'queries',
  {
    id: id(),
    organizationId: orgRef(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    dataSourceId: uuid('data_source_id')
      .notNull()
      .references(() => dataSources.id, { onDelete: 'cascade' }),
    statement: jsonb('statement').$type<Record<string, unknown>>().notNull(),
    ...timestamps(),
  },
  (t) => [uniqueIndex('queries_org_slug_uq').on(t.organizationId, t.slug)],
);

export const queryExecutions = pgTable(
  'query_executions',
  {
    id: id(),
    organizationId: orgRef(),
    queryId: uuid('query_id')
      .notNull()
      .references(() => queries.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    status: text('status').notNull(),
    resultType: text('result_type').notNull(),
    parameterKeys: jsonb('parameter_keys').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    result: jsonb('result').$type<Record<string, unknown> | null>(),
    rowCount: integer('row_count'),
    truncated: boolean('truncated').notNull().default(false),
    error: jsonb('error').$type<{ code: string; message: string } | null>(),
    durationMs: integer('duration_ms'),
    executedAt: ts('executed_at').notNull().defaultNow(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('query_executions_org_slug_uq').on(t.organizationId, t.slug),
    index('query_executions_query_idx').on(t.queryId, t.executedAt),
  ],
);
