import { ConnectorError } from '@sluice/connectors';
import { type Deps, systemActor } from '../../context';
import type { DbOrTx } from '../../db/client';
import type { dataSources } from '../../db/schema/index';

/** The data source row an OAuth grant belongs to (the data-sources module owns the table). */
type DataSourceRow = typeof dataSources.$inferSelect;

import { recordEvent } from '../events/index';
import { alertCredentialFailed, resolveCredentialFailed } from '../notifications/index';
import {
  type GrantRef,
  type GrantRow,
  grantOf,
  markFailed,
  metadataOf,
  openBundle,
  reloadGrant,
  storeRefreshed,
} from './oauth.grants';
import {
  OAuthNotConfiguredError,
  type OAuthProvider,
  OAuthRejectedError,
  providerLabel,
  refreshTokens,
} from './oauth.providers';

// Access tokens for connectors: refreshed shortly before they expire, and once more when the
// provider answers 401. A refused refresh moves the grant to `failed` exactly once (the
// compare-and-set in markFailed) with a `credential_failed` event. Concurrent refreshes of one
// grant are merged within a process and settled by compare-and-set across processes.

/** Refresh this long before the provider says the token expires. */
const EXPIRY_MARGIN_MS = 60_000;

export type OAuthAccess = {
  credentials: { access_token: string } | null;
  /** A newer access token after a 401, or null when none can be had. */
  refresh(): Promise<{ access_token: string } | null>;
};

const inFlight = new Map<string, Promise<string | null>>();

type TokenDeps = Pick<Deps, 'config' | 'keyring' | 'log' | 'queue' | 'clock'>;

export async function oauthAccess(
  db: DbOrTx,
  deps: TokenDeps,
  row: DataSourceRow,
  provider: OAuthProvider,
  credential: GrantRow | null,
): Promise<OAuthAccess> {
  const ref = await grantOf(db, row, provider, credential);
  const notAuthorized = () =>
    new ConnectorError(
      'AUTHENTICATION_FAILED',
      row.organizationGitlabConnection
        ? `the organization's ${providerLabel(provider)} connection is not authorized; authorize it through a data source with organization_gitlab_connection`
        : `the data source is not authorized with ${providerLabel(provider)}; authorize it (POST …/oauth:authorize)`,
    );
  if (!ref) return { credentials: null, refresh: async () => Promise.reject(notAuthorized()) };

  const token = async (force: boolean) => {
    const key = `${ref.place}:${ref.row.id}`;
    const running = inFlight.get(key);
    if (running) return running;
    const p = fresh(db, deps, row, provider, ref, force).finally(() => inFlight.delete(key));
    inFlight.set(key, p);
    return p;
  };
  let access: string | null;
  try {
    access = await token(false);
  } catch (err) {
    // Loading a connection never fails on the token: the connector asks again (refresh) when
    // it needs one, and reports this error as its own.
    if (!(err instanceof ConnectorError)) throw err;
    return { credentials: null, refresh: async () => Promise.reject(err) };
  }
  return {
    credentials: access ? { access_token: access } : null,
    refresh: async () => {
      const next = await token(true);
      return next && next !== access ? { access_token: next } : null;
    },
  };
}

async function fresh(
  db: DbOrTx,
  deps: TokenDeps,
  row: DataSourceRow,
  provider: OAuthProvider,
  initial: GrantRef,
  force: boolean,
): Promise<string | null> {
  const ref = (await reloadGrant(db, initial)) ?? initial;
  const bundle = await openBundle(db, deps, ref);
  if (!bundle) return null;
  const expiresAt = bundle.expires_at ? Date.parse(bundle.expires_at) : null;
  const due = force || (expiresAt !== null && expiresAt - Date.now() < EXPIRY_MARGIN_MS);
  if (!due || !bundle.refresh_token) return bundle.access_token;

  const meta = metadataOf(ref, provider);
  let next: Awaited<ReturnType<typeof refreshTokens>>;
  try {
    next = await refreshTokens(deps.config, provider, bundle.refresh_token);
  } catch (err) {
    if (err instanceof OAuthNotConfiguredError)
      throw new ConnectorError('AUTHENTICATION_FAILED', err.message);
    if (!(err instanceof OAuthRejectedError)) {
      throw new ConnectorError(
        'CONNECTION_FAILED',
        `${providerLabel(provider)}'s token endpoint could not be reached to refresh the access token`,
      );
    }
    // Another process may have refreshed (and so used up the refresh token) meanwhile.
    const now = await reloadGrant(db, ref);
    if (now && now.row.ciphertext !== ref.row.ciphertext && now.row.status === 'active') {
      return (await openBundle(db, deps, now))?.access_token ?? null;
    }
    const message = `${providerLabel(provider)} refused to refresh the access token (${err.error}); authorize the data source again`;
    const changed = await markFailed(db, ref, {
      ...meta,
      failure_code: 'REFRESH_FAILED',
      failure_message: message,
    });
    if (changed) {
      await recordEvent(
        db,
        { organizationId: row.organizationId, actor: systemActor, requestId: null },
        {
          entityType: 'data_source',
          entitySlug: row.slug,
          action: 'refresh',
          security: true,
          metadata: {
            notification_type: 'credential_failed',
            grant_status: 'failed',
            failure_code: 'REFRESH_FAILED',
            provider,
            organization_connection: ref.place === 'organization',
          },
        },
      );
      // credential_failed (critical) for the people on call; a later refresh resolves it.
      await db.transaction((tx) =>
        alertCredentialFailed(tx, deps, row, message, `oauth-refresh:${ref.row.id}:${Date.now()}`),
      );
      deps.log.warn({ dataSource: row.slug, provider }, 'oauth refresh refused; credential failed');
    }
    throw new ConnectorError('AUTHENTICATION_FAILED', message);
  }

  const nowIso = new Date().toISOString();
  const won = await storeRefreshed(db, deps, ref, next.bundle, {
    ...meta,
    scopes: next.scopes ?? meta.scopes,
    access_token_expires_at: next.bundle.expires_at,
    last_refreshed_at: nowIso,
    failure_code: null,
    failure_message: null,
  });
  if (won) {
    await db.transaction((tx) => resolveCredentialFailed(tx, deps, row));
    return next.bundle.access_token;
  }
  const now = await reloadGrant(db, ref);
  return now ? ((await openBundle(db, deps, now))?.access_token ?? null) : null;
}
