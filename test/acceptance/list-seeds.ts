import { issueToken } from '../../packages/server/src/http/tokens';
import type { BootstrapResult } from '../../packages/server/src/modules/system/bootstrap';
import type { TestApp } from '../support/app';
import { sqlRows } from './support';

// Rows for the list walks of pagination.api.test.ts, written straight to the store: names with
// duplicates, case and accents, and a handful of shared timestamps, so ties are the rule.

export const names = ['alpha', 'Alpha', 'beta', 'Ärger', 'zeta', 'a b', 'a-b', 'Zeta', 'ω', '10', '9'];
export const base = Date.parse('2025-03-01T12:00:00.000Z');
export const createdAts = [0, 1, 1000, 86400_000, 86400_001].map((d) => new Date(base + d));
export const updatedAts = [5, 6, 7, 8].map((d) => new Date(base + d * 3600_000));

export type ListSeed = (t: TestApp, orgId: string, boot: BootstrapResult) => Promise<void>;

export async function seedOrganizations(t: TestApp, _orgId: string, boot: BootstrapResult) {
  // The bootstrap owner becomes a member of 30 more organizations with shared timestamps.
  const [{ user_id }] = await sqlRows(t, `select id as user_id from users where slug = $1`, [boot.user_slug]);
  for (let i = 0; i < 30; i++) {
    const slug = `org-${(i * 37) % 100}`;
    const [org] = await sqlRows(
      t,
      `insert into organizations (slug, name, created_at, updated_at) values ($1, $2, $3, $3) returning id`,
      [slug, names[i % names.length], createdAts[i % createdAts.length].toISOString()],
    );
    await sqlRows(t, `insert into members (organization_id, user_id, role) values ($1, $2, 'viewer')`, [
      org.id,
      user_id,
    ]);
  }
}

export async function seedMembers(t: TestApp, orgId: string) {
  for (let i = 0; i < 30; i++) {
    const [u] = await sqlRows(
      t,
      `insert into users (slug, email, name, password_hash, created_at, updated_at)
       values ($1, $2, $3, 'x', $4, $4) returning id`,
      [
        `user-${(i * 37) % 100}`,
        `u${i}@members.example`,
        names[i % names.length],
        createdAts[i % createdAts.length].toISOString(),
      ],
    );
    await sqlRows(
      t,
      `insert into members (organization_id, user_id, role, created_at, updated_at) values ($1, $2, 'viewer', $3, $3)`,
      [orgId, u.id, createdAts[(i * 2) % createdAts.length].toISOString()],
    );
  }
}

export async function seedRoles(t: TestApp, orgId: string) {
  for (let i = 0; i < 30; i++) {
    await sqlRows(
      t,
      `insert into roles (organization_id, slug, name, permissions, created_at, updated_at)
       values ($1, $2, $3, '["organizations.read"]'::jsonb, $4, $4)`,
      [
        orgId,
        `role-${(i * 37) % 100}`,
        names[i % names.length],
        createdAts[i % createdAts.length].toISOString(),
      ],
    );
  }
}

export async function seedInvitations(t: TestApp, orgId: string) {
  for (let i = 0; i < 30; i++) {
    const at = createdAts[i % createdAts.length].toISOString();
    await sqlRows(
      t,
      `insert into invitations (organization_id, slug, email, role, expires_at, created_at, updated_at)
       values ($1, $2, $3, 'viewer', $4, $5, $5)`,
      [
        orgId,
        `inv-${(i * 37) % 100}`,
        `i${i % 7}-${i}@invited.example`,
        updatedAts[i % updatedAts.length].toISOString(),
        at,
      ],
    );
  }
}

export async function seedPats(t: TestApp, _orgId: string, boot: BootstrapResult) {
  const [{ user_id }] = await sqlRows(t, `select id as user_id from users where slug = $1`, [boot.user_slug]);
  for (let i = 0; i < 30; i++) {
    const issued = issueToken('pat');
    const at = createdAts[i % createdAts.length].toISOString();
    await sqlRows(
      t,
      `insert into personal_access_tokens (user_id, slug, name, token_prefix, token_hash, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $6, $6)`,
      [user_id, `pat-${(i * 37) % 100}`, names[i % names.length], issued.prefix, issued.hash, at],
    );
  }
}

export async function seedEvents(t: TestApp, orgId: string) {
  for (let i = 0; i < 30; i++) {
    await sqlRows(
      t,
      `insert into events (organization_id, slug, event_class, actor_type, entity_type, action, occurred_at)
       values ($1, $2, 'activity', 'system', 'organization', 'update', $3)`,
      [orgId, `ev-${(i * 37) % 100}`, createdAts[i % createdAts.length].toISOString()],
    );
  }
}

export async function seedNotifications(t: TestApp, orgId: string) {
  for (let i = 0; i < 30; i++) {
    const at = createdAts[i % createdAts.length].toISOString();
    await sqlRows(
      t,
      `insert into notifications (organization_id, slug, dedup_key, notification_type, severity, lifecycle_state,
         title, summary, source_kind, source_action, first_seen_at, last_seen_at, created_at, updated_at)
       values ($1, $2, $3, 'pipeline_run_failed', 'error', 'open', $4, 's', 'pipeline_run', 'update', $5, $5, $5, $5)`,
      [orgId, `ntf-${(i * 37) % 100}`, `k-${i}`, names[i % names.length], at],
    );
  }
}

export async function seedAlertDestinations(t: TestApp, orgId: string) {
  for (let i = 0; i < 30; i++) {
    await sqlRows(
      t,
      `insert into alert_destinations (organization_id, slug, name, type, non_secret_config, created_at, updated_at)
       values ($1, $2, $3, 'email', '{"recipients":["a@example.com"]}'::jsonb, $4, $4)`,
      [
        orgId,
        `dest-${(i * 37) % 100}`,
        names[i % names.length],
        createdAts[i % createdAts.length].toISOString(),
      ],
    );
  }
}

export async function seedAlertPolicies(t: TestApp, orgId: string) {
  // A policy always sends somewhere: each one gets the same destination.
  const [dest] = await sqlRows(
    t,
    `insert into alert_destinations (organization_id, slug, name, type, non_secret_config)
     values ($1, 'policy-target', 'Policy target', 'email', '{"recipients":["a@example.com"]}'::jsonb)
     returning id`,
    [orgId],
  );
  for (let i = 0; i < 30; i++) {
    const [p] = await sqlRows(
      t,
      `insert into alert_policies (organization_id, slug, name, scope, created_at, updated_at)
       values ($1, $2, $3, 'organization', $4, $4) returning id`,
      [
        orgId,
        `pol-${(i * 37) % 100}`,
        names[i % names.length],
        createdAts[i % createdAts.length].toISOString(),
      ],
    );
    await sqlRows(
      t,
      'insert into alert_policy_destinations (policy_id, destination_id, position) values ($1, $2, 0)',
      [p.id, dest.id],
    );
  }
}
