import { connectors, dataSourceTypes } from '@sluice/connectors';
import { z } from 'zod';
import {
  nameSchema,
  nullableTimestampSchema,
  orgSlugParam,
  slugSchema,
  storedNameSchema,
  timestampSchema,
} from '../../http/fields';
import { listQuerySchema, listResponseSchema, pageMeta } from '../../http/pagination';

export const dataSourceTypeSchema = z.enum(dataSourceTypes).describe('Data source (connector) type.');

export const credentialMetadataSchema = z
  .object({
    kind: z.enum(['static_secret', 'oauth2_grant']).describe('How the data source authenticates.'),
    status: z
      .enum(['pending', 'active', 'failed', 'revoked', 'rotated'])
      .describe('pending: OAuth not completed; failed: rejected by the remote system at the last test.'),
    updated_at: timestampSchema,
    oauth: z
      .object({
        provider: z.string().describe('OAuth provider.'),
        scopes: z.array(z.string()).describe('Granted scopes.'),
        account: z.string().nullable().describe('Connected account.'),
        access_token_expires_at: nullableTimestampSchema,
        last_refreshed_at: nullableTimestampSchema,
        revoked_at: nullableTimestampSchema,
        failure_code: z.string().nullable().describe('Code of the last failure.'),
        failure_message: z.string().nullable().describe('Sanitized message of the last failure.'),
      })
      .optional()
      .describe('OAuth grant metadata (oauth2_grant only).'),
  })
  .describe('Safe credential metadata. Secret values are never returned.');

export const diagnosticSchema = z
  .object({
    code: z.string().describe('Stable code, for example INVALID_OPENAPI.'),
    message: z.string().describe('Sanitized, human-readable message.'),
  })
  .describe('Sanitized diagnostic.');

export const dataSourceSchema = z
  .object({
    slug: slugSchema,
    name: storedNameSchema,
    type: dataSourceTypeSchema,
    config: z
      .record(z.string(), z.unknown())
      .describe(
        'Connector configuration, shape selected by type (docs/connectors/<type>.md). No credentials.',
      ),
    is_active: z.boolean().describe('Inactive data sources cannot be used by pipelines or queries.'),
    read_only: z.boolean().describe('A read-only data source cannot be a pipeline sink.'),
    organization_gitlab_connection: z
      .boolean()
      .describe(
        'True when the source uses the organization-level OAuth connection of a hosted git provider.',
      ),
    schema_status: z
      .enum(['not_imported', 'importing', 'failed', 'ready'])
      .describe('State of the cached schema.'),
    schema: z
      .record(z.string(), z.unknown())
      .describe('Cached schema introspection result; reading a data source never introspects live.'),
    schema_diagnostic: diagnosticSchema.optional().describe('Why the last import failed.'),
    credential: credentialMetadataSchema.optional(),
    connection_revision: z
      .int()
      .describe(
        'Increases with every config or credential change; invalidates earlier selection and consent.',
      ),
    last_tested_at: nullableTimestampSchema.describe('When the connection was last tested.'),
    test_error: z
      .string()
      .nullable()
      .describe('Message of the last connection test; null when it succeeded.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('Data source: a connection to an external system.');

// One create shape per connector, discriminated by `type` (built from the registry, so a new
// connector needs no change here).
const createOptions = connectors.map((c) =>
  z
    .object({
      type: z.literal(c.type).describe(`Data source type: ${c.label}.`),
      name: nameSchema,
      slug: slugSchema
        .optional()
        .describe('Optional client-chosen slug; generated from the name when absent.'),
      config: c.configSchema,
      ...(c.credentialsSchema ? { credentials: c.credentialsSchema } : {}),
      read_only: z
        .boolean()
        .default(c.defaultReadOnly)
        .describe(`A read-only data source cannot be a pipeline sink (default ${c.defaultReadOnly}).`),
    })
    .strict()
    .describe(`Create a ${c.label} data source.`),
);

export const createDataSourceBody = z
  .discriminatedUnion(
    'type',
    createOptions as unknown as [(typeof createOptions)[0], ...typeof createOptions],
  )
  .describe('Create request, discriminated by type. Credentials are write-only.');
export type CreateDataSourceInput = {
  type: string;
  name: string;
  slug?: string;
  config: Record<string, unknown>;
  credentials?: Record<string, unknown>;
  read_only: boolean;
};

export const updateDataSourceBody = z
  .object({
    name: nameSchema.optional(),
    config: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'Config fields to change, merged into the stored config (null removes a field) and validated against the type. A change increases connection_revision.',
      ),
    credentials: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'New credentials, shape selected by the type; the previous ones become rotated. Required when the change moves a field that decides where credentials are sent (host, port, base_url, endpoint, repo_url, instance_url, access_url, hosts…). Write-only.',
      ),
    is_active: z.boolean().optional().describe('Activate or deactivate the data source.'),
    read_only: z.boolean().optional().describe('Make the data source read-only (or writable).'),
    organization_gitlab_connection: z
      .boolean()
      .optional()
      .describe(
        'GitLab only: use the organization-level GitLab OAuth connection (shared by every GitLab source that opts in) instead of a grant of its own. A change increases connection_revision.',
      ),
  })
  .strict();
export type UpdateDataSourceInput = z.infer<typeof updateDataSourceBody>;

export const putCredentialsBody = z
  .object({
    credentials: z
      .record(z.string(), z.unknown())
      .describe('The new credentials, shape selected by the data source type. Write-only.'),
  })
  .strict()
  .describe('Replaces the credentials: the previous ones become rotated.');

export const dataSourceParams = z.object({ organization: orgSlugParam, data_source: slugSchema }).strict();

export const dataSourceSorts = [
  'data_source_created_at',
  'data_source_updated_at',
  'data_source_name',
] as const;
export const listDataSourcesQuery = listQuerySchema(dataSourceSorts);
export const dataSourceListSchema = listResponseSchema('data_sources', dataSourceSchema);

export const testConnectionResultSchema = z
  .object({
    data_source_slug: slugSchema,
    ok: z.boolean().describe('Whether the connector reached the system and was accepted.'),
    tested_at: timestampSchema,
    error: diagnosticSchema.nullable().describe('Why the test failed (sanitized), or null.'),
  })
  .describe('Connection test result. The request succeeds (200) whether or not the connection works.');

export const schemaImportResultSchema = z
  .object({
    data_source_slug: slugSchema,
    schema_status: z
      .enum(['not_imported', 'importing', 'failed', 'ready'])
      .describe('State of the cached schema.'),
    enqueued: z
      .boolean()
      .describe('True when a new import job was accepted; false when one was already running.'),
    started_at: nullableTimestampSchema.optional().describe('When the running import started.'),
    finished_at: nullableTimestampSchema.optional().describe('When the previous import finished.'),
    schema_diagnostic: diagnosticSchema.optional().describe('Diagnostic of the previous import.'),
    job: z
      .object({
        kind: z.string().describe('Job kind.'),
        queue: z.string().describe('Queue the job runs on.'),
        state: z
          .enum(['queued', 'skipped_duplicate'])
          .describe('queued, or skipped_duplicate when one was running.'),
      })
      .nullable()
      .optional()
      .describe('Queue metadata.'),
  })
  .describe('Schema import acceptance; poll the data source for schema_status.');

export const operationSchema = z
  .object({
    slug: slugSchema.describe('Identifier of the operation within this list (method and path).'),
    operation_id: z.string().nullable().describe('operationId from the document.'),
    method: z.string().describe('HTTP method.'),
    path: z.string().describe('Path template, relative to base_url.'),
    summary: z.string().nullable().describe('Summary from the document.'),
    tags: z.array(z.string()).describe('Tags from the document.'),
    parameters: z
      .array(
        z.object({
          name: z.string().describe('Parameter name.'),
          in: z.string().describe('Location: path, query, header, cookie (or body, formData in Swagger 2).'),
          required: z.boolean().describe('Whether the parameter is required.'),
        }),
      )
      .describe('Parameters of the operation.'),
  })
  .describe('An operation of the imported OpenAPI document. Browsing creates no saved queries.');

export const operationSorts = ['operation_path'] as const;
export const listOperationsQuery = listQuerySchema(operationSorts);
export const operationListSchema = listResponseSchema('operations', operationSchema);

export const branchListSchema = z
  .object({
    branches: z
      .array(
        z.object({
          name: z.string().describe('Branch name, without the refs/heads/ prefix.'),
          is_default: z.boolean().describe('The default branch (default_branch, else the remote HEAD).'),
        }),
      )
      .describe('Branches of the repository, by name.'),
    ...pageMeta,
  })
  .describe('Branch listing of a git-compatible data source, always on one page.');
