import { randomBytes, randomUUID } from 'node:crypto';
import type { Ctx, Deps, Scope } from '../../context';
import type { Tx } from '../../db/client';
import { validationFailed } from '../../http/errors';
import { randomSlug } from '../../http/fields';
import { assertProtectedConfirmation } from '../environments/index';
import { recordEvent } from '../events/index';
import { eventSource } from '../pipelines/index';
import { lockResolve, requireTrigger, type TriggerPe } from './triggers.place';
import { presentTrigger } from './triggers.present';
import * as repo from './triggers.repo';

// Webhook signing secrets: sealed with the keyring (the HMAC needs the value), shown once,
// rotated with a grace period so a sender can move over without downtime.

export const SECRET_KIND = 'pipeline_trigger_secret';
export const secretBinding = (organizationId: string, recordId: string) => ({
  organizationId,
  kind: SECRET_KIND,
  recordId,
});

/** A new signing secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
export function newSigningSecret() {
  const plaintext = `whsec_${randomBytes(32).toString('base64')}`;
  return { plaintext, prefix: plaintext.slice(0, 12) };
}

export async function addSecret(tx: Tx, deps: Deps, t: repo.TriggerRow) {
  const secret = newSigningSecret();
  const id = randomUUID();
  const sealed = await deps.keyring.encrypt(tx, secret.plaintext, secretBinding(t.organizationId, id));
  await repo.insertSecret(tx, {
    id,
    organizationId: t.organizationId,
    triggerId: t.id,
    slug: randomSlug('whs', 12),
    prefix: secret.prefix,
    kid: sealed.kid,
    ciphertext: sealed.ciphertext,
  });
  return secret.plaintext;
}

export async function rotateSecret(
  ctx: Ctx,
  scope: Scope,
  pe: TriggerPe,
  slug: string,
  previousValidFor: number,
  confirmation: string | null,
) {
  const { deps } = ctx;
  return deps.db.transaction(async (tx) => {
    const { tp, names, environment } = await lockResolve(tx, scope, pe);
    const t = await requireTrigger(tx, tp, slug, true);
    if (t.kind !== 'webhook')
      throw validationFailed([
        { path: '(path)', code: 'not_webhook', message: 'only webhook triggers have secrets' },
      ]);
    assertProtectedConfirmation(environment, confirmation);
    const now = new Date();
    const [current, ...older] = await repo.liveSecrets(tx, t.id, now);
    // At most two live secrets: anything older than the current one stops verifying now.
    for (const o of older) await repo.expireSecret(tx, o.id, now);
    if (current) await repo.expireSecret(tx, current.id, new Date(now.getTime() + previousValidFor * 1000));
    await repo.deleteExpiredSecrets(tx, t.id, now);
    const secret = await addSecret(tx, deps, t);
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'pipeline_trigger',
      entitySlug: slug,
      action: 'rotate',
      security: true,
      metadata: { previous_valid_for_seconds: previousValidFor },
    });
    const saved = await repo.updateTrigger(tx, t.id, {});
    return { ...(await presentTrigger(tx, saved, names)), secret };
  });
}
