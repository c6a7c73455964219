// Which policies a notification matches (docs/alerting.md#policies-and-matching): every enabled
// policy whose scope and non-null filters all match fires; no first-match-wins.

export type MatchableNotification = {
  notificationType: string;
  severity: string;
  lifecycleState: string;
  projectSlug: string | null;
  environmentSlug: string | null;
  sourceKind: string;
  sourceAction: string;
  sourceRefs: { kind: string; value: string }[];
};

export type MatchablePolicy = {
  scope: string;
  projectSlug: string | null;
  environmentSlug: string | null;
  notificationType: string | null;
  severity: string | null;
  lifecycleState: string | null;
  sourceKind: string | null;
  sourceAction: string | null;
  sourceRef: string | null;
  enabled: boolean;
};

export function scopeMatches(p: MatchablePolicy, n: MatchableNotification): boolean {
  if (p.scope === 'organization') return true;
  // Organization-level subjects (no project) reach only organization policies.
  if (p.scope === 'project') return n.projectSlug !== null && n.projectSlug === p.projectSlug;
  if (p.scope === 'project_environment') {
    return (
      n.projectSlug !== null &&
      n.projectSlug === p.projectSlug &&
      n.environmentSlug !== null &&
      n.environmentSlug === p.environmentSlug
    );
  }
  return false;
}

export function policyMatches(p: MatchablePolicy, n: MatchableNotification): boolean {
  if (!p.enabled || !scopeMatches(p, n)) return false;
  const eq = (want: string | null, have: string) => want === null || want === have;
  return (
    eq(p.notificationType, n.notificationType) &&
    eq(p.severity, n.severity) &&
    eq(p.lifecycleState, n.lifecycleState) &&
    eq(p.sourceKind, n.sourceKind) &&
    eq(p.sourceAction, n.sourceAction) &&
    (p.sourceRef === null || n.sourceRefs.some((r) => r.value === p.sourceRef))
  );
}

const scopeRank: Record<string, number> = { project_environment: 3, project: 2, organization: 1 };
const filterCount = (p: MatchablePolicy) =>
  [p.notificationType, p.severity, p.lifecycleState, p.sourceKind, p.sourceAction, p.sourceRef].filter(
    (v) => v !== null,
  ).length;

/** The policy credited on an attempt: most specific scope, then most filters, then oldest, then slug. */
export function moreSpecific<P extends MatchablePolicy & { createdAt: Date; slug: string }>(a: P, b: P): P {
  const by =
    (scopeRank[b.scope] ?? 0) - (scopeRank[a.scope] ?? 0) ||
    filterCount(b) - filterCount(a) ||
    a.createdAt.getTime() - b.createdAt.getTime() ||
    (a.slug < b.slug ? -1 : 1);
  return by <= 0 ? a : b;
}
