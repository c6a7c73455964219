import type { Ctx, Scope } from '../../context';
import { iso } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { requireTrigger, resolve, type TriggerPe } from './triggers.place';
import * as repo from './triggers.repo';

// The two "why did / didn't it fire" lists: the occurrence ledger and the accepted deliveries.

export async function listOccurrences(
  ctx: Ctx,
  scope: Scope,
  pe: TriggerPe,
  slug: string,
  query: ListQuery & { outcome?: string },
) {
  const { tp } = await resolve(ctx.deps.db, scope, pe);
  const t = await requireTrigger(ctx.deps.db, tp, slug);
  const page = await repo.listOccurrences(ctx.deps.db, t.id, query);
  return {
    ...page,
    items: page.items.map((o) => ({
      nominal_at: iso(o.nominalAt),
      fire_at: iso(o.fireAt),
      outcome: o.outcome as 'started',
      reason: o.reason,
      run_slug: o.runSlug,
    })),
  };
}

export async function listDeliveries(ctx: Ctx, scope: Scope, pe: TriggerPe, slug: string, query: ListQuery) {
  const { tp } = await resolve(ctx.deps.db, scope, pe);
  const t = await requireTrigger(ctx.deps.db, tp, slug);
  const page = await repo.listDeliveries(ctx.deps.db, t.id, query);
  return {
    ...page,
    items: page.items.map((d) => ({
      delivery_id: d.deliveryId,
      received_at: iso(d.receivedAt),
      body_sha256: d.bodySha256,
      input_keys: d.inputKeys,
      outcome: d.outcome as 'started',
      run_slug: d.runSlug,
    })),
  };
}
