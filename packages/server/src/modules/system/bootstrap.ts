import { hash } from '@node-rs/argon2';
import { sql } from 'drizzle-orm';
import type { Deps } from '../../context';
import { systemActor } from '../../context';
import { apiKeys, members, organizations, personalAccessTokens, users } from '../../db/schema/index';
import { conflict } from '../../http/errors';
import { randomSuffix, slugify } from '../../http/fields';
import { issueToken } from '../../http/tokens';
import { recordEvent } from '../events/index';
import { NO_PASSWORD } from '../identity/index';

export type BootstrapInput = { orgSlug: string; email: string; name?: string; password?: string };
export type BootstrapResult = {
  organization_slug: string;
  user_slug: string;
  api_key: string;
  personal_access_token: string;
};

export class AlreadyBootstrappedError extends Error {}

/**
 * First user, organization, owner API key and personal access token on an empty store.
 * Refuses once any organization exists, so the printed tokens can only ever be minted once.
 */
export async function bootstrap(deps: Deps, input: BootstrapInput): Promise<BootstrapResult> {
  const email = input.email.trim().toLowerCase();
  const name = input.name ?? email.split('@')[0];
  // Without a password the account signs in only with its token until its owner sets one.
  const passwordHash = input.password ? await hash(input.password, { algorithm: 2 }) : NO_PASSWORD;
  const key = issueToken('key');
  const pat = issueToken('pat');
  return deps.db.transaction(async (tx) => {
    // Serialize concurrent bootstraps against a server database.
    await tx.execute(sql`select pg_advisory_xact_lock(${0x51_1ce_02})`);
    const [{ n }] = (await tx.select({ n: sql<number>`count(*)::int` }).from(organizations)) as {
      n: number;
    }[];
    if (n > 0)
      throw new AlreadyBootstrappedError('the store already has an organization; bootstrap runs only once');
    const userSlug = `${slugify(name).slice(0, 40)}-${randomSuffix(4)}`;
    const [user] = await tx
      .insert(users)
      .values({ slug: userSlug, email, name, passwordHash, emailVerifiedAt: new Date() })
      .returning();
    const [org] = await tx
      .insert(organizations)
      .values({
        slug: input.orgSlug,
        name: input.orgSlug,
        trialEndsAt: new Date(Date.now() + 14 * 86400_000),
      })
      .returning()
      .catch((err) => {
        throw err?.cause?.code === '23505' ? conflict('organization slug taken') : err;
      });
    await tx.insert(members).values({ organizationId: org.id, userId: user.id, role: 'owner' });
    await tx.insert(apiKeys).values({
      organizationId: org.id,
      slug: 'bootstrap',
      name: 'Bootstrap owner key',
      tokenPrefix: key.prefix,
      tokenHash: key.hash,
      role: 'owner',
      canManageApiKeys: true,
      createdByUserId: user.id,
    });
    await tx.insert(personalAccessTokens).values({
      userId: user.id,
      slug: 'bootstrap',
      name: 'Bootstrap token',
      tokenPrefix: pat.prefix,
      tokenHash: pat.hash,
    });
    const src = { organizationId: org.id, actor: systemActor, requestId: null };
    await recordEvent(tx, src, {
      entityType: 'organization',
      entitySlug: org.slug,
      action: 'create',
      metadata: { bootstrap: true },
    });
    await recordEvent(tx, src, {
      entityType: 'api_key',
      entitySlug: 'bootstrap',
      action: 'create',
      security: true,
      metadata: { role: 'owner' },
    });
    return {
      organization_slug: org.slug,
      user_slug: user.slug,
      api_key: key.token,
      personal_access_token: pat.token,
    };
  });
}
