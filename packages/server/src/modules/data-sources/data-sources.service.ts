import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { allowsPrivateHosts, type ConnectorDefinition, connectorFor } from '@sluice/connectors';
import type { z } from 'zod';
import type { Ctx, Scope } from '../../context';
import type { DbOrTx, Tx } from '../../db/client';
import { AppError, conflict, notFound, type ValidationIssue, validationFailed } from '../../http/errors';
import { iso, isoOrNull } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { chooseSlug } from '../../http/slugs';
import { recordEvent } from '../events/index';
import { currentOrganizationGrant, emptyMetadata, providerOfType } from '../oauth/index';

import { credentialBinding } from './data-sources.connection';
import { assertCredentialsFollow, changedDestination, parsedCredentials } from './data-sources.destination';
import * as repo from './data-sources.repo';
import type { CreateDataSourceInput, UpdateDataSourceInput } from './data-sources.schemas';
import { revokeBeforeDelete } from './oauth.revoke';

export function toDataSource(row: repo.DataSourceRow, credential: repo.CredentialRow | null) {
  const schema =
    row.schema && Object.keys(row.schema).length > 0 ? row.schema : { schema_type: 'empty', type: row.type };
  return {
    slug: row.slug,
    name: row.name,
    type: row.type as any,
    config: row.config,
    is_active: row.isActive,
    read_only: row.readOnly,
    organization_gitlab_connection: row.organizationGitlabConnection,
    schema_status: row.schemaStatus as any,
    schema,
    ...(row.schemaDiagnostic ? { schema_diagnostic: row.schemaDiagnostic } : {}),
    ...(credential
      ? {
          credential: {
            kind: credential.kind as any,
            status: credential.status as any,
            updated_at: iso(credential.updatedAt),
            ...(credential.kind === 'oauth2_grant' && credential.oauth
              ? { oauth: { ...emptyMetadata(providerOfType(row.type) ?? 'github'), ...credential.oauth } }
              : {}),
          },
        }
      : {}),
    connection_revision: row.connectionRevision,
    last_tested_at: isoOrNull(row.lastTestedAt),
    test_error: row.testError,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export const src = (scope: Scope, ctx: Ctx) => ({
  organizationId: scope.org.id,
  actor: scope.actor,
  requestId: ctx.requestId,
});

export const unsupported = (type: string, op: string) =>
  new AppError('CONNECTOR_OPERATION_UNSUPPORTED', `the ${type} connector does not support ${op} yet`);

/** Zod issues of a nested part of the request, reported with their full path. */
function issuesAt(prefix: string, error: z.ZodError): ValidationIssue[] {
  return error.issues.map((i) => ({
    path: [prefix, ...i.path.map(String)].join('.'),
    code: i.code,
    message: i.message,
  }));
}

/**
 * Hosted deployments never reach private networks, whatever a data source asks for
 * (docs/operations.md#deployment-mode).
 */
function assertEgressAllowed(ctx: Ctx, config: unknown) {
  if (ctx.deps.config.deployment === 'hosted' && allowsPrivateHosts(config)) {
    throw validationFailed([
      {
        path: 'config.allow_private_hosts',
        code: 'private_hosts_not_allowed',
        message: 'hosted deployments cannot reach private hosts; allow_private_hosts must be false',
      },
    ]);
  }
}

export async function getRow(ctx: Ctx, scope: Scope, slug: string) {
  return requireDataSourceRow(ctx.deps.db, scope, slug);
}

/** A data source of the scope's organization; 404 otherwise. */
export async function requireDataSourceRow(db: DbOrTx, scope: Scope, slug: string) {
  const row = await repo.findDataSource(db, scope.org.id, slug);
  if (!row) throw notFound('data source');
  return row;
}

/** A data source by its id, for work that carries ids (a proof observation); null when gone. */
export async function dataSourceById(db: DbOrTx, id: string) {
  return repo.findDataSourceById(db, id);
}

export async function listDataSources(ctx: Ctx, scope: Scope, query: ListQuery) {
  const page = await repo.listDataSources(ctx.deps.db, scope.org.id, query);
  const credentials = await repo.currentCredentials(
    ctx.deps.db,
    page.items.map((r) => r.id),
  );
  const items = [];
  for (const r of page.items)
    items.push(toDataSource(r, await shownCredential(ctx, r, credentials.get(r.id) ?? null)));
  return { ...page, items };
}

/**
 * The credential a data source shows: its own, or for `organization_gitlab_connection` the
 * organization's shared grant (pending until someone authorizes it).
 */
export async function shownCredential(
  ctx: Ctx,
  row: repo.DataSourceRow,
  own: repo.CredentialRow | null,
): Promise<repo.CredentialRow | null> {
  const provider = providerOfType(row.type);
  if (!row.organizationGitlabConnection || !provider) return own;
  const shared = await currentOrganizationGrant(ctx.deps.db, row.organizationId, provider);
  if (!shared) {
    return {
      ...(own as repo.CredentialRow),
      kind: 'oauth2_grant',
      status: 'pending',
      oauth: emptyMetadata(provider),
      updatedAt: row.updatedAt,
    };
  }
  return { ...(shared as unknown as repo.CredentialRow), kind: 'oauth2_grant' };
}

export async function getDataSource(ctx: Ctx, scope: Scope, slug: string) {
  const row = await getRow(ctx, scope, slug);
  return toDataSource(
    row,
    await shownCredential(ctx, row, await repo.currentCredential(ctx.deps.db, row.id)),
  );
}

/** Encrypts and stores credentials as the data source's active ones (inside the caller's transaction). */
async function storeCredentials(ctx: Ctx, tx: Tx, row: repo.DataSourceRow, credentials: unknown) {
  const id = randomUUID();
  const sealed = await ctx.deps.keyring.encrypt(
    tx,
    JSON.stringify(credentials),
    credentialBinding(row.organizationId, id),
  );
  return repo.insertCredential(tx, {
    id,
    organizationId: row.organizationId,
    dataSourceId: row.id,
    kind: 'static_secret',
    status: 'active',
    kid: sealed.kid,
    ciphertext: sealed.ciphertext,
  });
}

export async function createDataSource(ctx: Ctx, scope: Scope, input: CreateDataSourceInput) {
  const definition = connectorFor(input.type);
  assertEgressAllowed(ctx, input.config);
  if (definition.credentialsRequired && input.credentials === undefined) {
    throw validationFailed([{ path: 'credentials', code: 'required', message: 'credentials are required' }]);
  }
  const db = ctx.deps.db;
  const slug = await chooseSlug(input.slug, input.name, (s) => repo.dataSourceSlugTaken(db, scope.org.id, s));
  const created = await db.transaction(async (tx) => {
    if (await repo.dataSourceSlugTaken(tx, scope.org.id, slug)) {
      throw conflict(`a data source with slug ${slug} already exists`);
    }
    const row = await repo.insertDataSource(tx, {
      organizationId: scope.org.id,
      slug,
      name: input.name,
      type: input.type,
      config: input.config,
      readOnly: input.read_only,
    });
    const provider = providerOfType(input.type);
    const credential =
      input.credentials !== undefined
        ? await storeCredentials(ctx, tx, row, input.credentials)
        : provider
          ? // OAuth kinds start `pending` until authorized (docs/oauth.md#credential-states).
            await repo.insertCredential(tx, {
              organizationId: row.organizationId,
              dataSourceId: row.id,
              kind: 'oauth2_grant',
              status: 'pending',
              oauth: emptyMetadata(provider),
            })
          : null;
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'data_source',
      entitySlug: slug,
      action: 'create',
      // Writing credentials is security-relevant (docs/api-conventions.md#events); metadata never
      // holds them.
      security: input.credentials !== undefined,
      metadata: {
        type: input.type,
        read_only: input.read_only,
        auth_configured: input.credentials !== undefined,
      },
    });
    return { row, credential };
  });
  return toDataSource(created.row, created.credential);
}

/** Shallow merge-patch of config: given fields replace, null removes. */
function mergeConfig(stored: Record<string, unknown>, patch: Record<string, unknown>) {
  const out: Record<string, unknown> = { ...stored };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

function validated(definition: ConnectorDefinition, merged: Record<string, unknown>) {
  const parsed = definition.configSchema.safeParse(merged);
  if (!parsed.success) throw validationFailed(issuesAt('config', parsed.error));
  return parsed.data as Record<string, unknown>;
}

export async function updateDataSource(ctx: Ctx, scope: Scope, slug: string, input: UpdateDataSourceInput) {
  const db = ctx.deps.db;
  const updated = await db.transaction(async (tx) => {
    const row = await repo.lockDataSource(tx, scope.org.id, slug);
    if (!row) throw notFound('data source');
    const definition = connectorFor(row.type);
    let config: Record<string, unknown> | undefined;
    if (input.config) {
      config = validated(definition, mergeConfig(row.config, input.config));
      assertEgressAllowed(ctx, config);
    }
    const configChanged = config !== undefined && !isDeepStrictEqual(config, row.config);
    const orgConnection = input.organization_gitlab_connection;
    if (orgConnection !== undefined && row.type !== 'gitlab') {
      throw validationFailed([
        {
          path: 'organization_gitlab_connection',
          code: 'not_supported',
          message: 'only gitlab data sources can use the organization-level GitLab connection',
        },
      ]);
    }
    const connectionChanged =
      orgConnection !== undefined && orgConnection !== row.organizationGitlabConnection;
    const credentials =
      input.credentials !== undefined ? parsedCredentials(definition, input.credentials) : undefined;
    if (config) {
      await assertCredentialsFollow(tx, row, changedDestination(definition, row.config, config), {
        credentialsGiven: credentials !== undefined,
        usesOrganizationConnection: orgConnection ?? row.organizationGitlabConnection,
      });
    }
    if (credentials !== undefined) {
      await repo.rotateCredentials(tx, row.id);
      await storeCredentials(ctx, tx, row, credentials);
    }
    const next = await repo.updateDataSource(tx, row.id, {
      ...(connectionChanged ? { organizationGitlabConnection: orgConnection } : {}),
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(configChanged ? { config } : {}),
      ...(input.is_active !== undefined ? { isActive: input.is_active } : {}),
      ...(input.read_only !== undefined ? { readOnly: input.read_only } : {}),
      bumpRevision: configChanged || connectionChanged || credentials !== undefined,
    });
    const fields = Object.keys(input).filter((k) => k !== 'config' || configChanged);
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'data_source',
      entitySlug: slug,
      action: 'update',
      // A credential write is security-relevant (docs/api-conventions.md#events); the metadata
      // names no value.
      security: credentials !== undefined,
      metadata: {
        fields,
        ...(configChanged ? { config_fields: Object.keys(input.config ?? {}) } : {}),
        connection_revision: next.connectionRevision,
      },
    });
    return { row: next, credential: await repo.currentCredential(tx, row.id) };
  });
  return toDataSource(updated.row, await shownCredential(ctx, updated.row, updated.credential));
}

export async function putCredentials(
  ctx: Ctx,
  scope: Scope,
  slug: string,
  credentials: Record<string, unknown>,
) {
  const db = ctx.deps.db;
  const updated = await db.transaction(async (tx) => {
    const row = await repo.lockDataSource(tx, scope.org.id, slug);
    if (!row) throw notFound('data source');
    const definition = connectorFor(row.type);
    if (!definition.credentialsSchema) {
      throw new AppError(
        'CONNECTOR_OPERATION_UNSUPPORTED',
        `the ${row.type} connector takes no static credentials; it connects through OAuth`,
      );
    }
    const parsed = definition.credentialsSchema.safeParse(credentials);
    if (!parsed.success) throw validationFailed(issuesAt('credentials', parsed.error));
    const rotated = await repo.rotateCredentials(tx, row.id);
    const credential = await storeCredentials(ctx, tx, row, parsed.data);
    const next = await repo.updateDataSource(tx, row.id, { bumpRevision: true });
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'data_source',
      entitySlug: slug,
      action: 'rotate',
      security: true,
      metadata: { rotated: rotated.length, connection_revision: next.connectionRevision },
    });
    return { row: next, credential };
  });
  return toDataSource(updated.row, updated.credential);
}

export async function deleteDataSource(ctx: Ctx, scope: Scope, slug: string) {
  const existing = await repo.findDataSource(ctx.deps.db, scope.org.id, slug);
  if (existing) await revokeBeforeDelete(ctx.deps, existing);
  await ctx.deps.db.transaction(async (tx) => {
    const row = await repo.lockDataSource(tx, scope.org.id, slug);
    if (!row) throw notFound('data source');
    await repo.deleteDataSource(tx, row.id);
    // Its encrypted credentials go with it (cascade): a security-relevant removal.
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'data_source',
      entitySlug: slug,
      action: 'delete',
      security: true,
      metadata: { type: row.type },
    });
  });
}

/** The row of a data source by id, locked for the rest of the transaction; null when gone. */
export async function lockDataSourceById(tx: Tx, id: string) {
  return repo.lockDataSourceById(tx, id);
}

/** Writes columns of a data source row as they are (a job's result, no request validation). */
export async function writeDataSourceRow(...args: Parameters<typeof repo.updateDataSource>) {
  return repo.updateDataSource(...args);
}

/** The condition that picks a data source's current credential, for a query of another module. */
export const isCurrentCredentialOf: typeof repo.isCurrentCredentialOf = (...args) =>
  repo.isCurrentCredentialOf(...args);
