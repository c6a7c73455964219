import type { HttpOperationSummary } from '@sluice/connectors';
import type { Ctx, Scope } from '../../context';
import { AppError, notFound } from '../../http/errors';
import { iso, isoOrNull, slugify } from '../../http/fields';
import { type ListQuery, onePage, paginateInMemory } from '../../http/pagination';
import { recordEvent } from '../events/index';
import { resolveConnectionAlerts } from '../notifications/index';
import { capabilityFor, describeFailure, type Failure, loadConnection } from './data-sources.connection';
import * as repo from './data-sources.repo';
import { getRow, src } from './data-sources.service';

// Test-connection, schema-import requests and the imported-operations listing: the parts of
// the module that talk to connectors. Network calls happen outside any transaction.

export const SCHEMA_IMPORT_JOB = 'data_sources.schema_import';
/** An import still "importing" after this long lost its worker; a new request may start over. */
const STALE_IMPORT_MS = 15 * 60 * 1000;

export async function testConnection(ctx: Ctx, scope: Scope, slug: string) {
  const { deps } = ctx;
  const row = await getRow(ctx, scope, slug);

  let failure: Failure | null = null;
  try {
    const loaded = await loadConnection(deps.db, deps, row);
    await loaded.definition.test(loaded.connection, loaded.ctx);
  } catch (err) {
    const described = describeFailure(err);
    if (described.unexpected)
      deps.log.error({ err, dataSource: row.slug }, 'connection test failed unexpectedly');
    failure = described.failure;
  }
  const testedAt = new Date();

  await deps.db.transaction(async (tx) => {
    const current = await repo.lockDataSource(tx, scope.org.id, slug);
    if (!current) throw notFound('data source');
    await repo.updateDataSource(tx, current.id, {
      lastTestedAt: testedAt,
      testError: failure?.message ?? null,
      touch: false,
    });
    // The credential's state follows the remote system's verdict, unless the credentials changed
    // while the test ran (docs/api-conventions.md#data-source-credentials).
    const credential = await repo.currentCredential(tx, current.id);
    if (credential && current.connectionRevision === row.connectionRevision) {
      if (failure?.code === 'AUTHENTICATION_FAILED' && credential.status === 'active') {
        await repo.setCredentialStatus(tx, credential.id, 'failed');
      } else if (!failure && credential.status === 'failed') {
        await repo.setCredentialStatus(tx, credential.id, 'active');
      }
    }
    // A test a person runs raises nothing (the response told them), but its success is the
    // matching success of an open connection or credential notification.
    if (!failure) await resolveConnectionAlerts(tx, deps, current);
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'data_source',
      entitySlug: slug,
      action: 'test_connection',
      metadata: { ok: failure === null, error_code: failure?.code ?? null },
    });
  });

  return { data_source_slug: slug, ok: failure === null, tested_at: iso(testedAt), error: failure };
}

/**
 * Branches straight from the remote. A remote that fails answers 502 REMOTE_FAILED with the
 * connector's sanitized message and its code as detailed_error (503 stays our own store's); a
 * blocked host is 422 PRIVATE_HOST_BLOCKED.
 */
export async function listBranches(ctx: Ctx, scope: Scope, slug: string) {
  const { deps } = ctx;
  const row = await getRow(ctx, scope, slug);
  const branches = capabilityFor(row.type, 'branches');
  // Outside the try: a credential that is not usable (an OAuth grant still pending) answers as
  // loadConnection says, not as an unavailable remote.
  const loaded = await loadConnection(deps.db, deps, row);
  try {
    return { branches: await branches.listBranches(loaded.connection, loaded.ctx), ...onePage };
  } catch (err) {
    const { failure, unexpected } = describeFailure(err);
    if (unexpected) deps.log.error({ err, dataSource: row.slug }, 'branch listing failed unexpectedly');
    if (failure.code === 'PRIVATE_HOST_BLOCKED') throw new AppError('PRIVATE_HOST_BLOCKED', failure.message);
    throw new AppError('REMOTE_FAILED', `the branches could not be listed: ${failure.message}`, {
      detailedError: failure.code,
    });
  }
}

export async function requestSchemaImport(ctx: Ctx, scope: Scope, slug: string) {
  const { deps } = ctx;
  return deps.db.transaction(async (tx) => {
    // The row lock makes "is one running? if not, start one" a single decision.
    const row = await repo.lockDataSource(tx, scope.org.id, slug);
    if (!row) throw notFound('data source');
    capabilityFor(row.type, 'discover');
    const running =
      row.schemaStatus === 'importing' &&
      row.schemaImportStartedAt !== null &&
      Date.now() - row.schemaImportStartedAt.getTime() < STALE_IMPORT_MS;
    if (running) {
      return {
        data_source_slug: slug,
        schema_status: 'importing' as const,
        enqueued: false,
        started_at: isoOrNull(row.schemaImportStartedAt),
        finished_at: isoOrNull(row.schemaImportFinishedAt),
        job: { kind: SCHEMA_IMPORT_JOB, queue: SCHEMA_IMPORT_JOB, state: 'skipped_duplicate' as const },
      };
    }
    const startedAt = new Date();
    await repo.updateDataSource(tx, row.id, {
      schemaStatus: 'importing',
      schemaImportStartedAt: startedAt,
      touch: false,
    });
    await deps.queue.enqueue(tx, SCHEMA_IMPORT_JOB, { dataSourceId: row.id });
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'data_source',
      entitySlug: slug,
      action: 'refresh',
      metadata: { schema_status: 'importing', previous_schema_status: row.schemaStatus },
    });
    return {
      data_source_slug: slug,
      schema_status: 'importing' as const,
      enqueued: true,
      started_at: iso(startedAt),
      finished_at: isoOrNull(row.schemaImportFinishedAt),
      ...(row.schemaDiagnostic ? { schema_diagnostic: row.schemaDiagnostic } : {}),
      job: { kind: SCHEMA_IMPORT_JOB, queue: SCHEMA_IMPORT_JOB, state: 'queued' as const },
    };
  });
}

type OperationItem = HttpOperationSummary & { slug: string };

/** The cached operations with list identifiers derived from method and path (unique per list). */
function operationItems(schema: Record<string, unknown>): OperationItem[] {
  if (schema.schema_type !== 'openapi' || !Array.isArray(schema.operations)) return [];
  const taken = new Set<string>();
  return (schema.operations as HttpOperationSummary[]).map((op) => {
    const base = slugify(`${op.method} ${op.path}`);
    let slug = base;
    for (let n = 2; taken.has(slug); n++) slug = `${base}-${n}`;
    taken.add(slug);
    return { slug, ...op };
  });
}

export async function listOperations(ctx: Ctx, scope: Scope, slug: string, query: ListQuery) {
  const row = await getRow(ctx, scope, slug);
  return paginateInMemory({
    query,
    sorts: { operation_path: { kind: 'text', valueOf: (o: OperationItem) => `${o.path} ${o.method}` } },
    idOf: (o) => o.slug,
    rows: operationItems(row.schema),
  });
}
