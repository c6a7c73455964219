import { createHash, randomUUID } from 'node:crypto';
import type { Deps } from '../../context';
import { AppError } from '../../http/errors';
import { recordEvent } from '../events/index';
import { resolvePointer } from './json-pointer';
import { detectRefusalBurst } from './refusal-burst';
import { startTriggeredRun } from './trigger-runs';
import { newSigningSecret, secretBinding } from './trigger-secrets';
import * as repo from './triggers.repo';
import { matchingSecret, TOLERANCE_SECONDS } from './webhook-signature';

// A signed delivery (docs/triggers.md#delivering). Every verification failure is the same 401 and
// uses up nothing; every refusal writes a security_audit event (actor external) with a reason,
// never the body or the signature.

export const MAX_BODY_BYTES = 256 * 1024;
const DELIVERY_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export type DeliveryRequest = {
  slug: string;
  deliveryId: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  ip: string;
  userAgent: string | null;
  requestId: string;
  now?: Date;
};

export type DeliveryAnswer = {
  status: 200 | 202;
  body: {
    delivery_id: string;
    run: { slug: string; state: string; trigger: 'webhook'; trigger_slug: string };
  };
};

type RefusalReason =
  | 'unknown_or_disabled'
  | 'missing_header'
  | 'id_mismatch'
  | 'stale_timestamp'
  | 'future_timestamp'
  | 'no_match'
  | 'expired_secret_only'
  | 'body_too_large'
  | 'body_not_object'
  | 'mapping_failed'
  | 'inputs_invalid'
  | 'not_deployed'
  | 'delivery_id_conflict';

class Refusal extends Error {
  constructor(
    readonly reason: RefusalReason,
    readonly error: AppError,
    readonly secretIds: string[] = [],
  ) {
    super(reason);
  }
}

const unverified = (reason: RefusalReason, secretIds: string[] = []) =>
  new Refusal(
    reason,
    new AppError('UNAUTHENTICATED', 'the webhook delivery could not be verified'),
    secretIds,
  );

const header = (h: DeliveryRequest['headers'], name: string) => {
  const v = h[name];
  return typeof v === 'string' ? v : Array.isArray(v) ? v[0] : undefined;
};

export async function receiveDelivery(deps: Deps, req: DeliveryRequest): Promise<DeliveryAnswer> {
  const now = req.now ?? new Date();
  const t = await repo.findWebhookTrigger(deps.db, req.slug);
  try {
    return await verifyAndStart(deps, req, t, now);
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    await audit(deps, req, t, err, now);
    throw err.error;
  }
}

async function verifyAndStart(
  deps: Deps,
  req: DeliveryRequest,
  t: repo.TriggerRow | null,
  now: Date,
): Promise<DeliveryAnswer> {
  // An unknown, disabled or paused trigger goes through every step a live one does, verified
  // against a stand-in secret, and is refused only at the end: the 401 takes the same path and
  // work either way, so neither its answer nor its timing tells which slugs exist.
  const live = t?.enabled && !t.paused ? t : null;
  const id = header(req.headers, 'webhook-id');
  const ts = header(req.headers, 'webhook-timestamp');
  const sig = header(req.headers, 'webhook-signature');
  if (!id || !ts || !sig) throw unverified('missing_header');
  if (id !== req.deliveryId || !DELIVERY_ID.test(id)) throw unverified('id_mismatch');
  if (!/^\d{1,12}$/.test(ts)) throw unverified('stale_timestamp');
  const skew = Number(ts) - Math.floor(now.getTime() / 1000);
  if (skew < -TOLERANCE_SECONDS) throw unverified('stale_timestamp');
  if (skew > TOLERANCE_SECONDS) throw unverified('future_timestamp');
  if (req.body.length > MAX_BODY_BYTES) {
    throw new Refusal(
      'body_too_large',
      new AppError('PAYLOAD_TOO_LARGE', `the delivery body exceeds ${MAX_BODY_BYTES} bytes`),
    );
  }

  const stored = await repo.secretsOf(deps.db, [t?.id ?? NO_TRIGGER_ID]);
  const all: Candidate[] = live ? stored : [await standInSecret(deps)];
  const current = all.filter((s) => !s.expiresAt || s.expiresAt > now);
  const plain = async (rows: Candidate[]) =>
    Promise.all(
      rows.map((s) =>
        deps.keyring.decrypt(
          deps.db,
          { kid: s.kid, ciphertext: s.ciphertext },
          secretBinding(s.organizationId, s.id),
        ),
      ),
    );
  const hit = matchingSecret(await plain(current), id, ts, req.body, sig);
  if (!live) throw unverified('unknown_or_disabled');
  if (hit < 0) {
    const expired = all.filter((s) => s.expiresAt && s.expiresAt <= now);
    const old = expired.length ? matchingSecret(await plain(expired), id, ts, req.body, sig) : -1;
    throw unverified(
      old >= 0 ? 'expired_secret_only' : 'no_match',
      current.map((s) => s.slug),
    );
  }
  const secret = current[hit];
  return start(deps, req, live, secret, id, now);
}

type Candidate = Pick<repo.SecretRow, 'id' | 'organizationId' | 'slug' | 'kid' | 'ciphertext' | 'expiresAt'>;

/** Matches no trigger: the secrets query of an unknown slug still runs, and finds nothing. */
const NO_TRIGGER_ID = '00000000-0000-0000-0000-000000000000';

// One stand-in secret per keyring (one per process), sealed like a real one, so the unknown
// slug's decrypt and HMAC cost what a real trigger's do. Nobody knows its value.
const standIns = new WeakMap<Deps['keyring'], Promise<Candidate>>();

function standInSecret(deps: Deps): Promise<Candidate> {
  let p = standIns.get(deps.keyring);
  if (!p) {
    const id = randomUUID();
    const organizationId = NO_TRIGGER_ID;
    p = deps.keyring
      .encrypt(deps.db, newSigningSecret().plaintext, secretBinding(organizationId, id))
      .then((sealed) => ({ id, organizationId, slug: 'none', expiresAt: null, ...sealed }));
    p.catch(() => standIns.delete(deps.keyring));
    standIns.set(deps.keyring, p);
  }
  return p;
}

async function start(
  deps: Deps,
  req: DeliveryRequest,
  t: repo.TriggerRow,
  secret: Candidate,
  id: string,
  now: Date,
): Promise<DeliveryAnswer> {
  const bodySha256 = createHash('sha256').update(req.body).digest('hex');
  return deps.db.transaction(async (tx) => {
    // Serializes deliveries of one trigger, so a repeated id is answered from the first one.
    await repo.findTrigger(tx, t, t.slug, true);
    await repo.touchSecret(tx, secret.id, now);
    const existing = await repo.findDelivery(tx, t.id, id);
    if (existing) {
      if (existing.bodySha256 !== bodySha256) {
        throw new Refusal(
          'delivery_id_conflict',
          new AppError('CONFLICT', `delivery ${id} was already received with a different body`),
        );
      }
      return {
        status: 200 as const,
        body: {
          delivery_id: id,
          run: {
            slug: existing.runSlug!,
            state: existing.runState!,
            trigger: 'webhook' as const,
            trigger_slug: t.slug,
          },
        },
      };
    }
    const input = mapInput(req.body, t.inputMapping ?? {});
    const names = await repo.namesOf(tx, t);
    const r = await startTriggeredRun(tx, deps, {
      trigger: t,
      kind: 'webhook',
      key: `delivery:${id}`,
      input,
      actor: { type: 'external', slug: null },
      requestId: req.requestId,
      ...names,
      metadata: { delivery_id: id },
    });
    if (!r.ok) {
      if (r.code === 'PIPELINE_NOT_DEPLOYED')
        throw new Refusal('not_deployed', new AppError('PIPELINE_NOT_DEPLOYED', r.reason));
      throw new Refusal('inputs_invalid', new AppError('WEBHOOK_INPUT_MAPPING_FAILED', r.reason));
    }
    await repo.insertDelivery(tx, {
      triggerId: t.id,
      deliveryId: id,
      bodySha256,
      inputKeys: Object.keys(input).sort(),
      outcome: 'started',
      runId: r.run.id,
      receivedAt: now,
    });
    return {
      status: 202 as const,
      body: {
        delivery_id: id,
        run: { slug: r.run.slug, state: r.run.state, trigger: 'webhook' as const, trigger_slug: t.slug },
      },
    };
  });
}

/** The run's input from the body through the mapping; values go to the run only, never stored. */
function mapInput(raw: Buffer, mapping: Record<string, string>): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new Refusal(
      'body_not_object',
      new AppError('WEBHOOK_BODY_INVALID', 'the delivery body is not JSON'),
    );
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new Refusal(
      'body_not_object',
      new AppError('WEBHOOK_BODY_INVALID', 'the delivery body must be a JSON object'),
    );
  }
  const input: Record<string, unknown> = {};
  for (const [key, pointer] of Object.entries(mapping)) {
    const r = resolvePointer(body, pointer);
    if (!r.found) {
      throw new Refusal(
        'mapping_failed',
        new AppError(
          'WEBHOOK_INPUT_MAPPING_FAILED',
          `input ${key}: JSON Pointer ${pointer} matches nothing in the body`,
        ),
      );
    }
    input[key] = r.value;
  }
  return input;
}

async function audit(deps: Deps, req: DeliveryRequest, t: repo.TriggerRow | null, r: Refusal, now: Date) {
  const metadata = {
    outcome: 'refused',
    reason: r.reason,
    status: r.error.status,
    delivery_id: DELIVERY_ID.test(req.deliveryId) ? req.deliveryId : null,
    ip: req.ip,
    user_agent: req.userAgent?.slice(0, 200) ?? null,
    secret_ids_tried: r.secretIds,
  };
  if (!t) {
    // No organization to record it in: the log is the only trace (never the body or signature).
    deps.log.warn({ webhook: { slug: req.slug, ...metadata } }, 'webhook delivery refused');
    return;
  }
  await recordEvent(
    deps.db,
    { organizationId: t.organizationId, actor: { type: 'external', slug: null }, requestId: req.requestId },
    { entityType: 'pipeline_trigger', entitySlug: t.slug, action: 'execute', securityOnly: true, metadata },
  );
  await deps.db.transaction((tx) => detectRefusalBurst(tx, deps, t, now));
}
