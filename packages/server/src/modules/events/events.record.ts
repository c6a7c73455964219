import { type SQL, sql } from 'drizzle-orm';
import type { Actor, Scope } from '../../context';
import type { DbOrTx } from '../../db/client';
import { timeOrderedId } from '../../db/ids';
import { events } from '../../db/schema/index';
import type { PermissionDenial } from '../../http/auth';
import { timeOrderedSlug } from '../../http/fields';

export const entityTypes = [
  'unknown',
  'organization',
  'member',
  'member_invitation',
  'role',
  'api_key',
  'data_source',
  'data_source_ref',
  'data_source_binding',
  'project',
  'environment',
  'project_environment',
  'query',
  'query_execution',
  'pipeline',
  'pipeline_deployment',
  'pipeline_version',
  'pipeline_run',
  'pipeline_checkpoint',
  'pipeline_trigger',
  'notification',
] as const;
export type EntityType = (typeof entityTypes)[number];

export const eventActions = [
  'unknown',
  'create',
  'update',
  'delete',
  'restore',
  'purge',
  'execute',
  'refresh',
  'test_connection',
  'rotate',
  'revoke',
  'reconcile',
  'deploy',
  'undeploy',
  'release',
  'publish',
  'enable',
  'disable',
  'accept',
  'decline',
  'expire',
  'auto_accept',
  'acknowledge',
  'resolve',
  'read',
] as const;
export type EventAction = (typeof eventActions)[number];

export const actorTypes = ['unknown', 'user', 'api_key', 'system', 'external'] as const;
export const eventClasses = ['unknown', 'activity', 'security_audit'] as const;

export type EventInput = {
  entityType: EntityType;
  entitySlug: string | null;
  action: EventAction;
  metadata?: Record<string, unknown>;
  /** Also write a security_audit record (docs/api-conventions.md#events). */
  security?: boolean;
  /** Write only the security_audit record (for example a permission denial, which changes nothing). */
  securityOnly?: boolean;
};

export type EventSource = { organizationId: string; actor: Actor; requestId: string | null };

const SECRET_KEY =
  /pass(word)?|secret|token|credential|authorization|private_?key|api_?key$|cookie|^input_values$/i;
/** Names that only identify a secret (`token_prefix`, `api_key_slug`), never hold one. */
const SAFE_SUFFIX = /_(prefix|slug)$/i;

/** Metadata never holds a secret: keys that look like one are dropped, recursively. */
export function sanitizeMetadata(value: unknown, depth = 0): unknown {
  if (depth > 6) return '[truncated]';
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => sanitizeMetadata(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (SECRET_KEY.test(k) && !SAFE_SUFFIX.test(k)) continue;
      out[k] = sanitizeMetadata(v, depth + 1);
    }
    return out;
  }
  if (typeof value === 'string' && value.length > 1000) return `${value.slice(0, 1000)}…`;
  return value;
}

/** Writes the event record(s) with the caller's transaction, so they commit with the change. */
export async function recordEvent(tx: DbOrTx, src: EventSource, e: EventInput): Promise<void> {
  const metadata = sanitizeMetadata(e.metadata ?? {}) as Record<string, unknown>;
  const classes = e.securityOnly
    ? ['security_audit']
    : e.security
      ? ['activity', 'security_audit']
      : ['activity'];
  const occurredAt = new Date();
  await tx.insert(events).values(
    classes.map((eventClass) => ({
      id: timeOrderedId(),
      organizationId: src.organizationId,
      slug: timeOrderedSlug('ev', 20),
      eventClass,
      actorType: src.actor.type,
      actorSlug: src.actor.slug,
      entityType: e.entityType,
      entitySlug: e.entitySlug,
      action: e.action,
      requestId: src.requestId,
      occurredAt,
      metadata,
    })),
  );
}

/** The security-audit record of a refused permission check (the auth hook's denial port). */
export async function recordPermissionDenial(db: DbOrTx, scope: Scope, denial: PermissionDenial) {
  await recordEvent(
    db,
    { organizationId: scope.org.id, actor: scope.actor, requestId: denial.requestId },
    {
      entityType: 'organization',
      entitySlug: scope.org.slug,
      action: 'read',
      securityOnly: true,
      metadata: {
        outcome: 'permission_denied',
        permission: denial.permission,
        method: denial.method,
        route: denial.route,
      },
    },
  );
}

/**
 * The activity record of a change written by the same statement: an `INSERT … SELECT` over
 * `from`, which yields at most one row (one slug is drawn here), with the entity slug and the
 * metadata as SQL over that row (the caller builds them from known keys: nothing to sanitize).
 */
export function eventFromRowSql(
  src: Omit<EventSource, 'organizationId'> & { organizationId: SQL },
  e: { entityType: EntityType; action: EventAction; entitySlug: SQL; metadata: SQL },
  from: SQL,
): SQL {
  return sql`
    insert into events (id, organization_id, slug, event_class, actor_type, actor_slug, entity_type,
                        entity_slug, action, request_id, occurred_at, metadata)
    select ${timeOrderedId()}::uuid, ${src.organizationId}, ${timeOrderedSlug('ev', 20)}, 'activity', ${src.actor.type},
           ${src.actor.slug}, ${e.entityType}, ${e.entitySlug}, ${e.action}, ${src.requestId},
           now(), ${e.metadata}
      from ${from}`;
}
