import { eq } from 'drizzle-orm';
import {
  members,
  organizations,
  personalAccessTokens,
  users,
} from '../../packages/server/src/db/schema/index';
import { randomSuffix } from '../../packages/server/src/http/fields';
import { issueToken } from '../../packages/server/src/http/tokens';
import type { TestApp } from './app';

export type TestUser = { id: string; slug: string; email: string; token: string };

/**
 * A user with a personal access token, written straight to the store, for suites that need
 * several people without going through sign-up and email verification.
 */
export async function createUser(
  t: TestApp,
  opts: { email?: string; name?: string; verified?: boolean } = {},
): Promise<TestUser> {
  const db = t.rt.deps.db;
  const suffix = randomSuffix(6);
  const email = opts.email ?? `user-${suffix}@example.com`;
  const name = opts.name ?? email.split('@')[0];
  const [user] = await db
    .insert(users)
    .values({
      slug: `u-${suffix}`,
      email,
      name,
      // Never used to sign in: these users authenticate with their token only.
      passwordHash: 'unusable',
      emailVerifiedAt: opts.verified === false ? null : new Date(),
    })
    .returning();
  const pat = issueToken('pat');
  await db.insert(personalAccessTokens).values({
    userId: user.id,
    slug: 'test',
    name: 'Test token',
    tokenPrefix: pat.prefix,
    tokenHash: pat.hash,
  });
  return { id: user.id, slug: user.slug, email, token: pat.token };
}

/** Adds the user to an organization with a role, bypassing invitations. */
export async function addMember(t: TestApp, orgSlug: string, user: TestUser, role: string) {
  const db = t.rt.deps.db;
  const [org] = await db.select().from(organizations).where(eq(organizations.slug, orgSlug)).limit(1);
  await db.insert(members).values({ organizationId: org.id, userId: user.id, role });
}
