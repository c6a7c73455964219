import { and, eq, isNull, lt } from 'drizzle-orm';
import type { Ctx, Scope } from '../../context';
import { oauthAuthorizationRequests, organizations } from '../../db/schema/index';
import { AppError, conflict, notFound } from '../../http/errors';
import { recordEvent } from '../events/index';
import {
  accountOf,
  authorizationUrl,
  exchangeCode,
  type GrantRef,
  grantOf,
  hashState,
  markRevoked,
  metadataOf,
  newPkce,
  newState,
  type OAuthMetadata,
  OAuthNotConfiguredError,
  type OAuthProvider,
  OAuthRejectedError,
  openBundle,
  providerConfig,
  providerLabel,
  providerOfType,
  revokeToken,
  storeNewGrant,
} from '../oauth/index';

import * as dsRepo from './data-sources.repo';
import { getDataSource, src, toDataSource, unsupported } from './data-sources.service';

// The authorization code flow (docs/oauth.md): authorize hands out a provider URL carrying a
// single-use `state` (stored hashed) and a PKCE S256 challenge, bound to the data source's
// connection_revision; the public callback checks all three, exchanges the code and stores the
// tokens sealed. Tokens never leave the server.

const requestBinding = (organizationId: string, id: string) => ({
  organizationId,
  kind: 'oauth_authorization_request',
  recordId: id,
});

const stateInvalid = (why: string) =>
  new AppError('OAUTH_STATE_INVALID', `the OAuth state ${why}; start the authorization again`);

function oauthProviderOf(type: string): OAuthProvider {
  const provider = providerOfType(type);
  if (!provider) throw unsupported(type, 'OAuth authorization (it takes static credentials)');
  return provider;
}

function configured(ctx: Ctx, provider: OAuthProvider) {
  try {
    return providerConfig(ctx.deps.config, provider);
  } catch (err) {
    if (err instanceof OAuthNotConfiguredError)
      throw new AppError('CONNECTOR_OPERATION_UNSUPPORTED', err.message);
    throw err;
  }
}

export async function authorize(
  ctx: Ctx,
  scope: Scope,
  slug: string,
  body: { connection_revision?: number } | undefined,
) {
  const { deps } = ctx;
  const row = await dsRepo.findDataSource(deps.db, scope.org.id, slug);
  if (!row) throw notFound('data source');
  const provider = oauthProviderOf(row.type);
  const c = configured(ctx, provider);
  if (body?.connection_revision !== undefined && body.connection_revision !== row.connectionRevision) {
    throw conflict(
      `connection_revision ${body.connection_revision} is stale; the data source is at ${row.connectionRevision}`,
    );
  }
  const { state, stateHash } = newState();
  const pkce = newPkce();
  const redirectUri = deps.config.oauth.redirectUrl;
  const id = crypto.randomUUID();
  await deps.db.transaction(async (tx) => {
    // Expired requests are of no use to anyone; clear them as new ones arrive.
    await tx.delete(oauthAuthorizationRequests).where(lt(oauthAuthorizationRequests.expiresAt, new Date()));
    const sealed = await deps.keyring.encrypt(tx, pkce.verifier, requestBinding(row.organizationId, id));
    await tx.insert(oauthAuthorizationRequests).values({
      id,
      organizationId: row.organizationId,
      dataSourceId: row.id,
      provider,
      target: row.organizationGitlabConnection ? 'organization' : 'data_source',
      stateHash,
      kid: sealed.kid,
      ciphertext: sealed.ciphertext,
      connectionRevision: row.connectionRevision,
      redirectUri,
      scopes: c.scopes,
      actorType: scope.actor.type,
      actorSlug: scope.actor.slug,
      expiresAt: new Date(Date.now() + deps.config.oauth.stateTtlSeconds * 1000),
    });
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'data_source',
      entitySlug: slug,
      action: 'update',
      metadata: { oauth: 'authorize', provider, connection_revision: row.connectionRevision },
    });
  });
  return {
    authorization_url: authorizationUrl(c, {
      state,
      challenge: pkce.challenge,
      redirectUri,
      scopes: c.scopes,
    }),
    connection_revision: row.connectionRevision,
  };
}

type CallbackQuery = { code?: string; state?: string; error?: string; error_description?: string };

/** Takes the request for this state out of play (single use) and returns it. */
async function consumeRequest(ctx: Ctx, state: string) {
  const hash = hashState(state);
  return ctx.deps.db.transaction(async (tx) => {
    const [req] = await tx
      .select()
      .from(oauthAuthorizationRequests)
      .where(eq(oauthAuthorizationRequests.stateHash, hash))
      .limit(1)
      .for('update');
    if (!req) throw stateInvalid('is unknown');
    if (req.usedAt) throw stateInvalid('was already used');
    await tx
      .update(oauthAuthorizationRequests)
      .set({ usedAt: new Date() })
      .where(and(eq(oauthAuthorizationRequests.id, req.id), isNull(oauthAuthorizationRequests.usedAt)));
    if (req.expiresAt.getTime() < Date.now()) throw stateInvalid('has expired');
    const verifier = await ctx.deps.keyring.decrypt(
      tx,
      { kid: req.kid, ciphertext: req.ciphertext },
      requestBinding(req.organizationId, req.id),
    );
    return { req, verifier };
  });
}

export async function callback(ctx: Ctx, query: CallbackQuery) {
  const { deps } = ctx;
  if (!query.state) throw stateInvalid('is missing');
  const { req, verifier } = await consumeRequest(ctx, query.state);
  const provider = req.provider as OAuthProvider;
  const label = providerLabel(provider);

  const before = await dsRepo.findDataSourceById(deps.db, req.dataSourceId);
  if (!before) throw notFound('data source');
  if (before.connectionRevision !== req.connectionRevision) {
    throw conflict(
      'the data source changed since the authorization started (connection_revision); start it again',
    );
  }
  if (query.error || !query.code) {
    const code = (query.error ?? 'missing_code').replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 64);
    throw new AppError('OAUTH_FAILED', `${label} did not grant access (${code})`);
  }

  let grant: Awaited<ReturnType<typeof exchangeCode>>;
  try {
    grant = await exchangeCode(deps.config, provider, {
      code: query.code,
      verifier,
      redirectUri: req.redirectUri,
    });
  } catch (err) {
    if (err instanceof OAuthRejectedError) throw new AppError('OAUTH_FAILED', err.message);
    if (err instanceof OAuthNotConfiguredError)
      throw new AppError('CONNECTOR_OPERATION_UNSUPPORTED', err.message);
    throw new AppError('UNAVAILABLE', `${label}'s token endpoint could not be reached; try again`);
  }
  const account = await accountOf(deps.config, provider, grant.bundle.access_token).catch(() => null);
  const oauth: OAuthMetadata = {
    provider,
    scopes: grant.scopes ?? (req.scopes as string[]),
    account,
    access_token_expires_at: grant.bundle.expires_at,
    last_refreshed_at: null,
    revoked_at: null,
    failure_code: null,
    failure_message: null,
  };

  const out = await deps.db.transaction(async (tx) => {
    const row = await dsRepo.lockDataSourceById(tx, req.dataSourceId);
    if (!row) throw notFound('data source');
    // Checked again under the lock: a change while the code was exchanged also invalidates.
    if (row.connectionRevision !== req.connectionRevision) {
      throw conflict(
        'the data source changed since the authorization started (connection_revision); start it again',
      );
    }
    const place = req.target === 'organization' ? 'organization' : 'data_source';
    const credential = await storeNewGrant(tx, deps, {
      place,
      organizationId: row.organizationId,
      dataSourceId: row.id,
      provider,
      bundle: grant.bundle,
      oauth,
    });
    const next = await dsRepo.updateDataSource(tx, row.id, { bumpRevision: true, testError: null });
    const [org] = await tx
      .select({ slug: organizations.slug })
      .from(organizations)
      .where(eq(organizations.id, row.organizationId))
      .limit(1);
    await recordEvent(
      tx,
      {
        organizationId: row.organizationId,
        actor: { type: req.actorType as 'user', slug: req.actorSlug },
        requestId: ctx.requestId,
      },
      {
        entityType: 'data_source',
        entitySlug: row.slug,
        action: 'update',
        security: true,
        metadata: {
          oauth: 'connected',
          provider,
          account,
          organization_connection: place === 'organization',
          connection_revision: next.connectionRevision,
        },
      },
    );
    const shown = place === 'organization' ? { ...credential, kind: 'oauth2_grant' } : credential;
    return { org: org?.slug ?? null, data: toDataSource(next, shown as dsRepo.CredentialRow) };
  });
  return {
    organization_slug: out.org ?? '',
    data_source_slug: out.data.slug,
    connection_revision: out.data.connection_revision,
    credential: out.data.credential!,
  };
}

/** Revokes the grant at the provider and forgets its tokens; the credential becomes `revoked`. */
export async function revoke(ctx: Ctx, scope: Scope, slug: string) {
  const { deps } = ctx;
  const row = await dsRepo.findDataSource(deps.db, scope.org.id, slug);
  if (!row) throw notFound('data source');
  const provider = oauthProviderOf(row.type);
  const ref = await grantOf(deps.db, row, provider, await dsRepo.currentCredential(deps.db, row.id));
  if (!ref || ref.row.status === 'revoked' || ref.row.status === 'pending') {
    throw conflict('the data source has no OAuth grant to revoke');
  }
  const bundle = await openBundle(deps.db, deps, ref);
  if (bundle) {
    try {
      await revokeToken(deps.config, provider, bundle.access_token);
    } catch (err) {
      if (err instanceof OAuthNotConfiguredError)
        throw new AppError('CONNECTOR_OPERATION_UNSUPPORTED', err.message);
      // The provider must confirm before we forget the token: otherwise it would stay valid
      // there with nobody able to revoke it.
      throw new AppError('UNAVAILABLE', `${providerLabel(provider)} could not revoke the token; try again`);
    }
  }
  await deps.db.transaction(async (tx) => {
    const locked = await dsRepo.lockDataSourceById(tx, row.id);
    if (!locked) throw notFound('data source');
    await markRevoked(tx, ref as GrantRef, {
      ...metadataOf(ref, provider),
      revoked_at: new Date().toISOString(),
    });
    const next = await dsRepo.updateDataSource(tx, row.id, { bumpRevision: true });
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'data_source',
      entitySlug: slug,
      action: 'revoke',
      security: true,
      metadata: {
        provider,
        organization_connection: ref.place === 'organization',
        connection_revision: next.connectionRevision,
      },
    });
  });
  return getDataSource(ctx, scope, slug);
}
