import { connectors } from '@sluice/connectors';
import { z } from 'zod';
import { access } from '../../http/access';
import { errorResponses } from '../../http/openapi';
import { onePage, pageMeta } from '../../http/pagination';
import type { TypedApp } from '../../http/typed-app';

const jsonSchema = z.record(z.string(), z.unknown());

const connectorListSchema = z
  .object({
    connectors: z
      .array(
        z.object({
          type: z.string().describe('Data source type, as `type` of a create request.'),
          label: z.string().describe('Display name of the connector.'),
          config_schema: jsonSchema.describe('JSON Schema of `config` (the input shape: defaults optional).'),
          credentials_schema: jsonSchema
            .nullable()
            .describe('JSON Schema of the write-only `credentials`, or null when the type has none.'),
          credentials_required: z.boolean().describe('Whether a data source of this type needs credentials.'),
          default_read_only: z.boolean().describe('`read_only` when the create request omits it.'),
        }),
      )
      .describe('Every connector type, in registry order.'),
    ...pageMeta,
  })
  .describe('Connector types and the shapes of their configuration and credentials.');

// Computed once: the registry is fixed at start, and forms in the app are generated from it.
let cached: z.infer<typeof connectorListSchema> | null = null;
const toJson = (schema: z.ZodType) =>
  z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;

/** The registry as data, so clients (the app's data source forms) follow the server's schemas. */
export function connectorsRoutes(app: TypedApp) {
  app.get('/connectors', {
    config: access.principal(),
    schema: {
      tags: ['Data sources'],
      summary: 'List connector types with the JSON Schemas of their config and credentials',
      response: { 200: connectorListSchema, ...errorResponses },
    },
    handler: async () => {
      cached ??= {
        connectors: connectors.map((c) => ({
          type: c.type,
          label: c.label,
          config_schema: toJson(c.configSchema),
          credentials_schema: c.credentialsSchema ? toJson(c.credentialsSchema) : null,
          credentials_required: c.credentialsRequired,
          default_read_only: c.defaultReadOnly,
        })),
        // The catalog is always one complete page.
        ...onePage,
      };
      return cached;
    },
  });
}
