import { describe, expect, it } from 'vitest';
import {
  type MatchableNotification,
  type MatchablePolicy,
  moreSpecific,
  policyMatches,
} from './alert-matching';

// The filter matching matrix: each filter null (matches anything), set and matching, set and not
// matching; and every scope against project-level and organization-level notifications.

const n: MatchableNotification = {
  notificationType: 'pipeline_run_failed',
  severity: 'error',
  lifecycleState: 'open',
  projectSlug: 'shop',
  environmentSlug: 'prod',
  sourceKind: 'pipeline_run',
  sourceAction: 'update',
  sourceRefs: [
    { kind: 'pipeline', value: 'orders' },
    { kind: 'environment', value: 'prod' },
  ],
};
const orgLevel: MatchableNotification = { ...n, projectSlug: null, environmentSlug: null };

const open: MatchablePolicy = {
  scope: 'organization',
  projectSlug: null,
  environmentSlug: null,
  notificationType: null,
  severity: null,
  lifecycleState: null,
  sourceKind: null,
  sourceAction: null,
  sourceRef: null,
  enabled: true,
};

describe('policy matching', () => {
  const filters: [keyof MatchablePolicy, string, string][] = [
    ['notificationType', 'pipeline_run_failed', 'schema_import_failed'],
    ['severity', 'error', 'critical'],
    ['lifecycleState', 'open', 'resolved'],
    ['sourceKind', 'pipeline_run', 'data_source'],
    ['sourceAction', 'update', 'refresh'],
    ['sourceRef', 'orders', 'payments'],
  ];
  for (const [field, hit, miss] of filters) {
    it(`${field}: null matches, equal matches, different does not`, () => {
      expect(policyMatches({ ...open, [field]: null }, n)).toBe(true);
      expect(policyMatches({ ...open, [field]: hit }, n)).toBe(true);
      expect(policyMatches({ ...open, [field]: miss }, n)).toBe(false);
    });
  }

  it('source_ref matches any of the source_refs values', () => {
    expect(policyMatches({ ...open, sourceRef: 'prod' }, n)).toBe(true);
  });

  it('all non-null filters must match together', () => {
    const all = { ...open, notificationType: 'pipeline_run_failed', severity: 'error', sourceRef: 'orders' };
    expect(policyMatches(all, n)).toBe(true);
    expect(policyMatches({ ...all, severity: 'warning' }, n)).toBe(false);
  });

  it('scopes: organization matches all; project and project_environment match exactly', () => {
    const cases: [Partial<MatchablePolicy>, boolean, boolean][] = [
      [{ scope: 'organization' }, true, true],
      [{ scope: 'project', projectSlug: 'shop' }, true, false],
      [{ scope: 'project', projectSlug: 'other' }, false, false],
      [{ scope: 'project_environment', projectSlug: 'shop', environmentSlug: 'prod' }, true, false],
      [{ scope: 'project_environment', projectSlug: 'shop', environmentSlug: 'dev' }, false, false],
      [{ scope: 'project_environment', projectSlug: 'other', environmentSlug: 'prod' }, false, false],
      [{ scope: 'unknown' }, false, false],
    ];
    for (const [p, project, organization] of cases) {
      expect(policyMatches({ ...open, ...p }, n), JSON.stringify(p)).toBe(project);
      expect(policyMatches({ ...open, ...p }, orgLevel), `${JSON.stringify(p)} org-level`).toBe(organization);
    }
  });

  it('disabled policies never match', () => {
    expect(policyMatches({ ...open, enabled: false }, n)).toBe(false);
  });

  it('credits the most specific policy', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const a = { ...open, slug: 'a', createdAt: at };
    const b = { ...open, scope: 'project', projectSlug: 'shop', slug: 'b', createdAt: at };
    const c = { ...open, severity: 'error', slug: 'c', createdAt: at };
    expect(moreSpecific(a, b).slug).toBe('b');
    expect(moreSpecific(a, c).slug).toBe('c');
    expect(moreSpecific(c, { ...c, slug: 'd', createdAt: new Date(at.getTime() - 1) }).slug).toBe('d');
  });
});
