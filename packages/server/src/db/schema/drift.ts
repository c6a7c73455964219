import { and, eq, sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { id, timestamps, ts } from './columns';
import { dataSources, projects } from './connections';
import { organizations } from './organizations';
import { pipelines } from './pipelines';

// Drift impact reports and data contracts (docs/drift-and-contracts.md).

const orgRef = () =>
  uuid('organization_id')
    .notNull()
    .references(() => organizations.id, { onDelete: 'cascade' });

export type DriftSeverity = 'safe' | 'warning' | 'breaking';
export type ReportChange = {
  kind: string;
  path: string;
  before: string | null;
  after: string | null;
  severity: DriftSeverity;
  reason_code: string;
};
export type ReportImpact = {
  kind: 'pipeline' | 'step' | 'edge' | 'sink' | 'run' | 'unknown_consumer';
  severity: DriftSeverity;
  message: string;
  pipeline_slug?: string;
  step_slug?: string;
  edge_slug?: string;
};

export const driftReports = pgTable(
  'drift_reports',
  {
    id: id(),
    organizationId: orgRef(),
    /** Null only for a data source no pipeline binds. */
    projectId: uuid('project_id').references(() => projects.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    reportType: text('report_type').notNull(),
    status: text('status').notNull().default('open'),
    severity: text('severity').notNull(),
    summary: text('summary').notNull(),
    changes: jsonb('changes').$type<ReportChange[]>().notNull().default(sql`'[]'::jsonb`),
    impacts: jsonb('impacts').$type<ReportImpact[]>().notNull().default(sql`'[]'::jsonb`),
    dataSourceId: uuid('data_source_id').references(() => dataSources.id, { onDelete: 'cascade' }),
    pipelineId: uuid('pipeline_id').references(() => pipelines.id, { onDelete: 'cascade' }),
    /** What supersedes what: one open report per subject. */
    subjectKey: text('subject_key').notNull(),
    /** sha256 of the normalized changes: identical changes are not reported twice. */
    fingerprint: text('fingerprint').notNull(),
    /** The schema (or revision) the changes are measured from; carried forward while open. */
    baseline: jsonb('baseline').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    createdAt: ts('created_at').notNull().defaultNow(),
    supersededAt: ts('superseded_at'),
  },
  (t) => [
    uniqueIndex('drift_reports_slug_uq').on(t.organizationId, t.slug),
    index('drift_reports_subject_idx').on(t.subjectKey, t.status),
    index('drift_reports_project_idx').on(t.projectId, t.createdAt),
    index('drift_reports_ds_idx').on(t.dataSourceId, t.createdAt),
  ],
);

export type ContractColumnRecord = {
  name: string;
  type: string;
  nullable: boolean;
  unique: boolean;
  primary_key: boolean;
};
export type QualityRule = {
  metric: 'row_count' | 'null_values' | 'duplicate_values';
  column?: string;
  columns?: string[];
  unit?: 'rows' | 'percent';
  must_be?: number;
  must_be_less_than?: number;
  must_be_greater_than?: number;
};

export const contracts = pgTable(
  'contracts',
  {
    id: id(),
    organizationId: orgRef(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    pipelineId: uuid('pipeline_id')
      .notNull()
      .references(() => pipelines.id, { onDelete: 'cascade' }),
    stepSlug: text('step_slug').notNull(),
    latestRevisionSlug: text('latest_revision_slug'),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex('contracts_project_slug_uq').on(t.projectId, t.slug),
    index('contracts_target_idx').on(t.pipelineId, t.stepSlug),
  ],
);

export const contractRevisions = pgTable(
  'contract_revisions',
  {
    id: id(),
    organizationId: orgRef(),
    contractId: uuid('contract_id')
      .notNull()
      .references(() => contracts.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    basedOn: text('based_on'),
    compatibility: text('compatibility').notNull().default('backward'),
    columns: jsonb('columns').$type<ContractColumnRecord[]>().notNull(),
    quality: jsonb('quality').$type<QualityRule[]>().notNull().default(sql`'[]'::jsonb`),
    freshness: jsonb('freshness').$type<{ column: string; max_latency_seconds: number } | null>(),
    digest: text('digest').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('contract_revisions_slug_uq').on(t.contractId, t.slug)],
);

/** Joins a contract to its latest revision; a contract without a revision joins nothing. */
export const latestRevisionOfContract = and(
  eq(contractRevisions.contractId, contracts.id),
  eq(contractRevisions.slug, contracts.latestRevisionSlug),
)!;
