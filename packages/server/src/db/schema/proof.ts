import { sql } from 'drizzle-orm';
import { boolean, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { id, timestamps, ts } from './columns';
import { dataSources } from './connections';
import { organizations } from './organizations';

// Proof for git-backed data sources (docs/proof.md). Observations and receipts
// are immutable once finished: nothing updates them but the observation job's one result.

const orgRef = () =>
  uuid('organization_id')
    .notNull()
    .references(() => organizations.id, { onDelete: 'cascade' });
const dsRef = () =>
  uuid('data_source_id')
    .notNull()
    .references(() => dataSources.id, { onDelete: 'cascade' });

export type ProofTarget = { kind: 'pipeline' | 'contract' | 'path'; ref: string };

/**
 * The deployment's Ed25519 signing keys; the private half sealed by the keyring. One is active;
 * a rotated key is kept (its public half verifies the receipts it signed) with `retired_at`.
 */
export const proofSigningKeys = pgTable(
  'proof_signing_keys',
  {
    keyid: text('keyid').primaryKey(),
    publicKey: text('public_key').notNull(),
    kid: text('kid').notNull(),
    sealedPrivateKey: text('sealed_private_key').notNull(),
    active: boolean('active').notNull().default(true),
    createdAt: ts('created_at').notNull().defaultNow(),
    retiredAt: ts('retired_at'),
  },
  (t) => [uniqueIndex('proof_signing_keys_one_active_uq').on(t.active).where(sql`${t.active}`)],
);

export const proofSettings = pgTable(
  'proof_settings',
  {
    id: id(),
    organizationId: orgRef(),
    dataSourceId: dsRef(),
    enabled: boolean('enabled').notNull(),
    publishChecks: boolean('publish_checks').notNull(),
    expectedRepositoryId: text('expected_repository_id').notNull(),
    targets: jsonb('targets').$type<ProofTarget[]>().notNull(),
    ...timestamps(),
  },
  (t) => [uniqueIndex('proof_settings_ds_uq').on(t.dataSourceId)],
);

export const proofCandidates = pgTable(
  'proof_candidates',
  {
    id: id(),
    organizationId: orgRef(),
    dataSourceId: dsRef(),
    slug: text('slug').notNull(),
    repositoryId: text('repository_id').notNull(),
    commitSha: text('commit_sha').notNull(),
    ref: text('ref'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('proof_candidates_slug_uq').on(t.dataSourceId, t.slug),
    uniqueIndex('proof_candidates_commit_uq').on(t.dataSourceId, t.repositoryId, t.commitSha),
  ],
);

export const proofObservations = pgTable(
  'proof_observations',
  {
    id: id(),
    organizationId: orgRef(),
    dataSourceId: dsRef(),
    slug: text('slug').notNull(),
    candidateId: uuid('candidate_id').references(() => proofCandidates.id, { onDelete: 'cascade' }),
    requestedCommit: text('requested_commit'),
    requestedRef: text('requested_ref'),
    repositoryId: text('repository_id'),
    commitSha: text('commit_sha'),
    treeSha: text('tree_sha'),
    state: text('state').notNull(),
    targets: jsonb('targets').$type<ProofTarget[]>().notNull(),
    results: jsonb('results').$type<unknown[]>(),
    inputs: jsonb('inputs').$type<unknown[]>(),
    error: jsonb('error').$type<{ code: string; message: string } | null>(),
    digest: text('digest'),
    observedAt: ts('observed_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('proof_observations_slug_uq').on(t.dataSourceId, t.slug)],
);

export const proofReceipts = pgTable(
  'proof_receipts',
  {
    id: id(),
    organizationId: orgRef(),
    dataSourceId: dsRef(),
    slug: text('slug').notNull(),
    candidateId: uuid('candidate_id')
      .notNull()
      .references(() => proofCandidates.id, { onDelete: 'cascade' }),
    sequence: integer('sequence').notNull(),
    verdict: text('verdict').notNull(),
    observationSlugs: jsonb('observation_slugs').$type<string[]>().notNull(),
    envelope: jsonb('envelope').$type<Record<string, unknown>>().notNull(),
    digest: text('digest').notNull(),
    prevReceiptDigest: text('prev_receipt_digest'),
    check: jsonb('check').$type<Record<string, unknown> | null>(),
    compiledAt: ts('compiled_at').notNull(),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex('proof_receipts_slug_uq').on(t.dataSourceId, t.slug),
    uniqueIndex('proof_receipts_chain_uq').on(t.dataSourceId, t.sequence),
  ],
);
