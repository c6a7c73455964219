import { eq, sql } from 'drizzle-orm';
import type { Principal } from '../../context';
import type { Db, Store } from '../../db/client';
import { apiKeys, personalAccessTokens, users } from '../../db/schema/index';
import { hashToken, parseToken, type TokenKind } from '../../http/tokens';
import { lookupKey } from './key-lookup';

const TOUCH_EVERY_MS = 60_000;

// Every authenticated request runs one of these lookups, so they are prepared once per
// database handle: the query is built and parsed once, not per request.
function prepare(db: Db) {
  return {
    pat: db
      .select({
        id: personalAccessTokens.id,
        expiresAt: personalAccessTokens.expiresAt,
        revokedAt: personalAccessTokens.revokedAt,
        lastUsedAt: personalAccessTokens.lastUsedAt,
        userId: users.id,
        userSlug: users.slug,
        email: users.email,
        emailVerifiedAt: users.emailVerifiedAt,
      })
      .from(personalAccessTokens)
      .innerJoin(users, eq(users.id, personalAccessTokens.userId))
      .where(eq(personalAccessTokens.tokenHash, sql.placeholder('hash')))
      .limit(1)
      .prepare('sluice_auth_pat'),
  };
}

const prepared = new WeakMap<Db, ReturnType<typeof prepare>>();
function statements(db: Db) {
  let s = prepared.get(db);
  if (!s) {
    s = prepare(db);
    prepared.set(db, s);
  }
  return s;
}

/**
 * Resolves a bearer token to its principal, or null for any malformed, unknown, revoked or
 * expired token: the caller answers all of those with the same 401.
 */
export async function resolvePrincipal(
  store: Pick<Store, 'db' | 'prepared'>,
  token: string,
  now = new Date(),
  /** The token's kind and hash when the caller has already worked them out. */
  known?: { kind: TokenKind | null; hash: string },
  /** How long an API key read may serve this host's requests (key-lookup.ts); 0: never. */
  keyCacheMs = 0,
): Promise<Principal | null> {
  const kind = known ? known.kind : parseToken(token);
  if (!kind) return null;
  const hash = known ? known.hash : hashToken(token);
  const { db } = store;
  if (kind === 'pat') {
    const [row] = await statements(db).pat.execute({ hash });
    if (!row || row.revokedAt || (row.expiresAt && row.expiresAt <= now)) return null;
    if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > TOUCH_EVERY_MS) {
      await db
        .update(personalAccessTokens)
        .set({ lastUsedAt: now })
        .where(eq(personalAccessTokens.id, row.id));
    }
    return {
      type: 'user',
      userId: row.userId,
      userSlug: row.userSlug,
      email: row.email,
      emailVerified: row.emailVerifiedAt !== null,
      tokenId: row.id,
    };
  }
  const key = await lookupKey(store, hash, keyCacheMs);
  if (!key || key.revoked_at || (key.expires_at && key.expires_at <= now)) return null;
  if (!key.last_used_at || now.getTime() - key.last_used_at.getTime() > TOUCH_EVERY_MS) {
    // The requests of one lookup batch (or of the key's time in memory) share the row: the first
    // of them writes the touch.
    key.last_used_at = now;
    await db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, key.id));
  }
  return {
    type: 'api_key',
    apiKeyId: key.id,
    apiKeySlug: key.slug,
    organizationId: key.organization_id,
    organization: {
      id: key.organization_id,
      slug: key.org_slug,
      name: key.org_name,
      eventLogRetentionDays: key.event_log_retention_days,
    },
    role: key.role,
    canManageApiKeys: key.can_manage_api_keys,
    storedRolePermissions: key.role_permissions ?? null,
  };
}
