import { randomUUID } from 'node:crypto';
import type { Ctx, Scope } from '../../context';
import { AppError, conflict, notFound } from '../../http/errors';
import { iso } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { chooseSlug } from '../../http/slugs';
import { recordEvent } from '../events/index';
import { eventSource } from '../projects/index';
import * as repo from './destinations.repo';

export const DESTINATION_TEST_QUEUE = 'alerts.destination_test';

export function toDestination(r: repo.DestinationRow) {
  return {
    slug: r.slug,
    name: r.name,
    type: r.type as 'email',
    non_secret_config: { recipients: r.nonSecretConfig.recipients },
    enabled: r.enabled,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

// Destinations have no entity type of their own (docs/api-conventions.md#events); their events
// are recorded on the organization with the destination named in the metadata.
const destinationEvent = (slug: string, action: 'create' | 'update' | 'delete', extra = {}) => ({
  entityType: 'organization' as const,
  entitySlug: null,
  action,
  metadata: { alert_destination_slug: slug, ...extra },
});

export async function listDestinations(ctx: Ctx, scope: Scope, query: ListQuery) {
  const page = await repo.listDestinations(ctx.deps.db, scope.org.id, query);
  return { ...page, items: page.items.map(toDestination) };
}

async function mustFind(ctx: Ctx, scope: Scope, slug: string) {
  const row = await repo.findDestination(ctx.deps.db, scope.org.id, slug);
  if (!row) throw notFound('alert destination');
  return row;
}

export async function getDestination(ctx: Ctx, scope: Scope, slug: string) {
  return toDestination(await mustFind(ctx, scope, slug));
}

export async function createDestination(
  ctx: Ctx,
  scope: Scope,
  input: {
    name: string;
    slug?: string;
    type: 'email';
    non_secret_config: { recipients: string[] };
    enabled: boolean;
  },
) {
  const db = ctx.deps.db;
  const slug = await chooseSlug(input.slug, input.name, (s) =>
    repo.destinationSlugTaken(db, scope.org.id, s),
  );
  const row = await db.transaction(async (tx) => {
    if (await repo.destinationSlugTaken(tx, scope.org.id, slug))
      throw conflict(`an alert destination with slug ${slug} already exists`);
    const created = await repo.insertDestination(tx, {
      organizationId: scope.org.id,
      slug,
      name: input.name,
      type: input.type,
      nonSecretConfig: { recipients: input.non_secret_config.recipients },
      enabled: input.enabled,
    });
    await recordEvent(
      tx,
      eventSource(scope, ctx),
      destinationEvent(slug, 'create', { recipient_count: input.non_secret_config.recipients.length }),
    );
    return created;
  });
  return toDestination(row);
}

export async function updateDestination(
  ctx: Ctx,
  scope: Scope,
  slug: string,
  input: { name?: string; non_secret_config?: { recipients: string[] }; enabled?: boolean },
) {
  const row = await ctx.deps.db.transaction(async (tx) => {
    const found = await repo.findDestination(tx, scope.org.id, slug);
    if (!found) throw notFound('alert destination');
    const updated = await repo.updateDestination(tx, found.id, {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
      ...(input.non_secret_config
        ? { nonSecretConfig: { recipients: input.non_secret_config.recipients } }
        : {}),
    });
    await recordEvent(
      tx,
      eventSource(scope, ctx),
      destinationEvent(slug, 'update', { fields: Object.keys(input) }),
    );
    return updated;
  });
  return toDestination(row);
}

export async function deleteDestination(ctx: Ctx, scope: Scope, slug: string) {
  await ctx.deps.db.transaction(async (tx) => {
    const found = await repo.findDestination(tx, scope.org.id, slug);
    if (!found) throw notFound('alert destination');
    const using = await repo.policiesUsing(tx, found.id);
    if (using.length > 0) {
      throw conflict(
        `alert destination ${slug} is used by alert policies ${using.join(', ')}; remove it there first`,
      );
    }
    await repo.deleteDestination(tx, found.id);
    await recordEvent(tx, eventSource(scope, ctx), destinationEvent(slug, 'delete'));
  });
}

/**
 * Queues one real message to the destination on its own queue (no retry) and answers at once.
 * Mail written to the log is not delivery, so without SMTP nothing is queued.
 */
export async function testDestination(ctx: Ctx, scope: Scope, slug: string) {
  const row = await mustFind(ctx, scope, slug);
  if (!ctx.deps.config.smtpUrl) {
    throw new AppError(
      'EMAIL_NOT_CONFIGURED',
      'no SMTP server is configured (SLUICE_SMTP_URL), so a test message cannot be delivered',
    );
  }
  const testId = randomUUID().slice(0, 8);
  // A double click within the same minute sends one message, not two.
  const jobId = await ctx.deps.queue.enqueue(
    null,
    'alerts.destination_test',
    { destinationId: row.id, testId },
    { singletonKey: `${scope.org.id}:${row.slug}`, singletonSeconds: 60 },
  );
  return {
    status: 'accepted',
    destination_slug: row.slug,
    destination_type: row.type as 'email',
    recipient_count: row.nonSecretConfig.recipients.length,
    diagnostics_persisted: false,
    enqueued_jobs: [
      {
        kind: 'alert_destination_test',
        queue: DESTINATION_TEST_QUEUE,
        state: jobId ? 'created' : 'skipped_duplicate',
      },
    ],
  };
}
