import { z } from 'zod';
import { POLICY_SCOPES, type Policy } from './alerts';
import { nameField, slugField } from './form-fields';

// The policy form's values and how they map to and from the API's policy (Any = '' = null).
export const policySchema = z
  .object({
    name: nameField,
    slug: slugField,
    scope: z.enum(POLICY_SCOPES),
    project_slug: z.string(),
    environment_slug: z.string(),
    notification_type: z.string(),
    severity: z.string(),
    lifecycle_state: z.string(),
    source_kind: z.string(),
    source_action: z.string(),
    source_ref: z.string(),
    destination_slugs: z.array(z.string()).min(1, 'Pick at least one destination').max(20, 'At most 20'),
    enabled: z.boolean(),
  })
  // The API's scope rules, checked before the round trip (the server checks them again).
  .superRefine((v, ctx) => {
    if (v.scope !== 'organization' && !v.project_slug)
      ctx.addIssue({ code: 'custom', path: ['project_slug'], message: 'This scope needs a project' });
    if (v.scope === 'project_environment' && !v.environment_slug)
      ctx.addIssue({
        code: 'custom',
        path: ['environment_slug'],
        message: 'This scope needs an environment',
      });
  });
export type PolicyValues = z.infer<typeof policySchema>;

export const SCOPE_LABELS: Record<(typeof POLICY_SCOPES)[number], string> = {
  organization: 'Whole organization',
  project: 'One project (every environment)',
  project_environment: 'One environment of one project',
};

const orNull = (v: string) => (v === '' ? null : v);

export const policyValues = (p?: Policy): PolicyValues => ({
  name: p?.name ?? '',
  slug: '',
  scope: p && p.scope !== 'unknown' ? p.scope : 'organization',
  project_slug: p?.project_slug ?? '',
  environment_slug: p?.environment_slug ?? '',
  notification_type: p?.notification_type ?? '',
  severity: p?.severity ?? '',
  lifecycle_state: p?.lifecycle_state ?? '',
  source_kind: p?.source_kind ?? '',
  source_action: p?.source_action ?? '',
  source_ref: p?.source_ref ?? '',
  destination_slugs: p?.destination_slugs ?? [],
  enabled: p?.enabled ?? true,
});

export const policyBody = (v: PolicyValues) => ({
  name: v.name,
  scope: v.scope,
  project_slug: v.scope === 'organization' ? null : orNull(v.project_slug),
  environment_slug: v.scope === 'project_environment' ? orNull(v.environment_slug) : null,
  notification_type: orNull(v.notification_type),
  severity: orNull(v.severity),
  lifecycle_state: orNull(v.lifecycle_state),
  source_kind: orNull(v.source_kind),
  source_action: orNull(v.source_action),
  source_ref: orNull(v.source_ref),
  destination_slugs: v.destination_slugs,
  enabled: v.enabled,
});
