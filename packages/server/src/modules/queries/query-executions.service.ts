import { ConnectorError, EgressBlockedError, type QueryResult } from '@sluice/connectors';
import type { Ctx, Scope } from '../../context';
import { AppError, conflict, notFound } from '../../http/errors';
import { iso, randomSlug } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { capabilityFor, findDataSource, loadConnection } from '../data-sources/index';
import { recordEvent } from '../events/index';
import * as repo from './queries.repo';
import { checkStatement, src } from './queries.service';
import { resultMasker } from './result-masking';

// Saved queries run synchronously in the request: connect, execute with bound parameters,
// store the bounded outcome. Parameter values exist only for the length of the call: the
// execution record and its event keep their names, never the values.

export function toExecution(r: repo.ExecutionRow) {
  return {
    slug: r.slug,
    query_slug: r.querySlug,
    status: r.status as 'succeeded' | 'failed',
    result_type: r.resultType as QueryResult['result_type'],
    parameter_keys: r.parameterKeys,
    result: r.result,
    // The connector result sections (FTP: type, success, payload;
    // docs/connectors/ftp.md#statements) on the common envelope: `payload` is `result` under the
    // connectors' name.
    type: r.statementType,
    success: r.status === 'succeeded',
    payload: r.result,
    row_count: r.rowCount,
    truncated: r.truncated,
    error: r.error,
    duration_ms: r.durationMs,
    executed_at: iso(r.executedAt),
  };
}

export async function listExecutions(ctx: Ctx, scope: Scope, querySlug: string, query: ListQuery) {
  const db = ctx.deps.db;
  const q = await repo.findQuery(db, scope.org.id, querySlug);
  if (!q) throw notFound('query');
  const page = await repo.listExecutions(db, scope.org.id, q.id, query);
  return { ...page, items: page.items.map(toExecution) };
}

export async function getExecution(ctx: Ctx, scope: Scope, slug: string) {
  const row = await repo.findExecution(ctx.deps.db, scope.org.id, slug);
  if (!row) throw notFound('query execution');
  return toExecution(row);
}

type Outcome =
  | { status: 'succeeded'; result: QueryResult }
  | { status: 'failed'; error: { code: string; message: string } };

// A connector that ignores the limits must not fill the store: oversized payloads are dropped.
const PAYLOAD_SLACK_BYTES = 64 * 1024;

export async function executeQuery(
  ctx: Ctx,
  scope: Scope,
  querySlug: string,
  parameters: Record<string, unknown>,
) {
  const { deps } = ctx;
  const db = deps.db;
  const query = await repo.findQuery(db, scope.org.id, querySlug);
  if (!query) throw notFound('query');
  const source = await findDataSource(db, scope.org.id, query.dataSourceSlug);
  if (!source) throw notFound('data source');
  if (!source.isActive) throw conflict(`data source ${source.slug} is not active`);

  // Outside any transaction: this decrypts the credential and then talks to the network.
  const loaded = await loadConnection(db, deps, source);
  const { definition } = loaded;
  const capability = capabilityFor(definition.type, 'query');
  const statement = checkStatement(definition, query.statement);
  const parameterKeys = Object.keys(parameters).sort();

  const started = Date.now();
  let outcome: Outcome;
  try {
    const result = await capability.execute(loaded.connection, statement, parameters, {
      ...loaded.ctx,
      readOnly: source.readOnly,
    });
    outcome = { status: 'succeeded', result };
  } catch (err) {
    if (err instanceof ConnectorError) {
      outcome = { status: 'failed', error: { code: err.code, message: err.message } };
    } else if (err instanceof EgressBlockedError) {
      // The guard's own error, as connectors built on a vendor SDK (GitHub, GitLab) pass it on.
      outcome = { status: 'failed', error: { code: 'PRIVATE_HOST_BLOCKED', message: err.message } };
    } else if (err instanceof AppError) {
      throw err;
    } else {
      // A connector bug: the log gets the error (never the parameters), the record a generic line.
      deps.log.error(
        { err, query: query.slug, type: definition.type },
        'query execution failed unexpectedly',
      );
      outcome = {
        status: 'failed',
        error: {
          code: 'QUERY_FAILED',
          message: 'the execution failed unexpectedly; the server log has details',
        },
      };
    }
  }
  const durationMs = Date.now() - started;
  const mask = resultMasker(loaded.connection);
  if (outcome.status === 'failed') outcome.error = mask(outcome.error);

  let result: Record<string, unknown> | null = null;
  let rowCount: number | null = null;
  let truncated = false;
  if (outcome.status === 'succeeded') {
    const r = outcome.result;
    const size = Buffer.byteLength(JSON.stringify(r.payload));
    if (size > loaded.ctx.limits.maxResultBytes + PAYLOAD_SLACK_BYTES) {
      truncated = true;
    } else {
      result = mask(r.payload);
      rowCount = r.row_count;
      truncated = r.truncated;
    }
  }

  const slug = randomSlug('qe', 16);
  const stored = await db.transaction(async (tx) => {
    const row = await repo.insertExecution(tx, {
      organizationId: scope.org.id,
      queryId: query.id,
      slug,
      status: outcome.status,
      resultType: outcome.status === 'succeeded' ? outcome.result.result_type : capability.resultType,
      parameterKeys,
      result,
      rowCount,
      truncated,
      error: outcome.status === 'failed' ? outcome.error : null,
      durationMs,
    });
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'query_execution',
      entitySlug: slug,
      action: 'execute',
      metadata: {
        query_slug: query.slug,
        data_source_slug: source.slug,
        parameter_names: parameterKeys,
        status: outcome.status,
        ...(outcome.status === 'failed'
          ? { error_code: outcome.error.code }
          : { row_count: rowCount, truncated }),
        duration_ms: durationMs,
      },
    });
    return row;
  });
  return toExecution({ ...stored, querySlug: query.slug, statementType: String(query.statement.type) });
}
