import { capabilityOf } from '@sluice/connectors';
import { z } from 'zod';
import { type Deps, systemActor } from '../context';
import {
  dataSourceById,
  describeFailure,
  type Failure,
  loadConnection,
  lockDataSourceById,
  writeDataSourceRow,
} from '../modules/data-sources/index';
import { recordSourceSchemaReports } from '../modules/drift/index';
import { recordEvent } from '../modules/events/index';
import { alertSchemaImport } from '../modules/notifications/index';
import { defineJob } from './define';
import type { JobHandler } from './queue';

const payload = z.object({ dataSourceId: z.string().uuid() });

declare module './queue' {
  interface JobPayloads {
    'data_sources.schema_import': typeof payload;
  }
}

/**
 * Runs a requested schema import: introspect through the connector (outside any transaction),
 * then store `ready` + schema or `failed` + a sanitized diagnostic on the still-importing row.
 */
const importDataSourceSchema =
  (deps: Deps): JobHandler<'data_sources.schema_import'> =>
  async ({ dataSourceId }) => {
    const row = await dataSourceById(deps.db, dataSourceId);
    if (row?.schemaStatus !== 'importing') return;

    let schema: Record<string, unknown> | null = null;
    let failure: Failure | null = null;
    try {
      const loaded = await loadConnection(deps.db, deps, row);
      // A kind without discover fails here as UNSUPPORTED_OPERATION, stored as the diagnostic.
      const discover = capabilityOf(loaded.definition, 'discover');
      schema = (await discover.importSchema(loaded.connection, loaded.ctx)) as Record<string, unknown>;
    } catch (err) {
      const described = describeFailure(err);
      if (described.unexpected) deps.log.error({ err, dataSourceId }, 'schema import failed unexpectedly');
      failure = described.failure;
    }

    await deps.db.transaction(async (tx) => {
      const current = await lockDataSourceById(tx, dataSourceId);
      if (current?.schemaStatus !== 'importing') return;
      // Config or credentials changed meanwhile: this result describes a connection that no longer exists.
      if (!failure && current.connectionRevision !== row.connectionRevision) {
        failure = {
          code: 'CONNECTION_CHANGED',
          message: 'the connection changed while the schema was imported; import again',
        };
      }
      await writeDataSourceRow(tx, current.id, {
        ...(failure
          ? { schemaStatus: 'failed', schemaDiagnostic: failure }
          : { schemaStatus: 'ready', schema: schema!, schemaDiagnostic: null }),
        schemaImportFinishedAt: new Date(),
        touch: false,
      });
      // Drift reports are written with the schema they describe, or not at all.
      if (!failure) await recordSourceSchemaReports(tx, deps, current, current.schema, schema!);
      await recordEvent(
        tx,
        { organizationId: current.organizationId, actor: systemActor, requestId: null },
        {
          entityType: 'data_source',
          entitySlug: current.slug,
          action: 'refresh',
          metadata: { schema_status: failure ? 'failed' : 'ready', diagnostic_code: failure?.code ?? null },
        },
      );
      const importKey = `import:${current.id}:${current.schemaImportStartedAt?.toISOString() ?? 'unknown'}`;
      await alertSchemaImport(tx, deps, current, failure, importKey);
    });
  };

export const schemaImportJob = defineJob({
  name: 'data_sources.schema_import',
  payload,
  // Failures are recorded as the import's diagnostic, so a retry only covers a lost worker.
  policy: { retry: { limit: 1, delaySeconds: 10, backoff: false }, expireInSeconds: 300 },
  handler: importDataSourceSchema,
});
