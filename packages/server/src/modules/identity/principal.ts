import { eq, sql } from 'drizzle-orm';
import type { Org, Principal } from '../../context';
import type { Db } from '../../db/client';
import { apiKeys, organizations, personalAccessTokens, users } from '../../db/schema/index';
import { hashToken, parseToken } from '../../http/tokens';

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
    // The key's organization comes along, so an organization route needs no second lookup.
    key: db
      .select({
        key: apiKeys,
        org: {
          id: organizations.id,
          slug: organizations.slug,
          name: organizations.name,
          eventLogRetentionDays: organizations.eventLogRetentionDays,
        },
      })
      .from(apiKeys)
      .innerJoin(organizations, eq(organizations.id, apiKeys.organizationId))
      .where(eq(apiKeys.tokenHash, sql.placeholder('hash')))
      .limit(1)
      .prepare('sluice_auth_key'),
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
export async function resolvePrincipal(db: Db, token: string, now = new Date()): Promise<Principal | null> {
  const kind = parseToken(token);
  if (!kind) return null;
  const hash = hashToken(token);
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
  const [row] = await statements(db).key.execute({ hash });
  const key = row?.key;
  if (!key || key.revokedAt || (key.expiresAt && key.expiresAt <= now)) return null;
  if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() > TOUCH_EVERY_MS) {
    await db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, key.id));
  }
  return {
    type: 'api_key',
    apiKeyId: key.id,
    apiKeySlug: key.slug,
    organizationId: key.organizationId,
    organization: row.org as Org,
    role: key.role,
    canManageApiKeys: key.canManageApiKeys,
  };
}
