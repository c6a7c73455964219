import { type Actor, type Deps, systemActor } from '../../context';
import type { Tx } from '../../db/client';
import { randomSlug } from '../../http/fields';
import { recordEvent } from '../events/index';
import { raiseNotification } from '../notifications/index';
import * as repo from './drift.repo';
import { fingerprint, type ReportBody } from './report';

// Persisting reports (docs/drift-and-contracts.md#when-reports-are-written): one open report per
// subject; a new report supersedes it; identical changes (same fingerprint as the open report) are
// not written again; the baseline of the open report is carried forward so the diff stays
// cumulative.

export type ReportSubject = {
  organizationId: string;
  projectId: string | null;
  reportType: 'source_schema' | 'contract_impact';
  subjectKey: string;
  dataSourceId?: string;
  pipelineId?: string;
  /** For the notification: the project and the stable subject (the data source or the pipeline). */
  projectSlug: string | null;
  subject: { kind: 'data_source' | 'pipeline'; slug: string };
};

export type DriftDeps = Pick<Deps, 'queue'>;

export type WriteOutcome = { written: repo.DriftReportRow | null; superseded: string | null };

export async function writeReport(
  tx: Tx,
  deps: DriftDeps,
  subject: ReportSubject,
  baseline: Record<string, unknown>,
  body: ReportBody,
  actor: Actor = systemActor,
  requestId: string | null = null,
): Promise<WriteOutcome> {
  const open = await repo.lockOpenReport(tx, subject.subjectKey);
  const now = new Date();
  if (body.changes.length === 0) {
    // Back to the baseline: nothing is drifting any more, so the open report is closed.
    if (open) await repo.supersede(tx, open.id, now);
    return { written: null, superseded: open?.slug ?? null };
  }
  const fp = fingerprint(body.changes);
  if (open && open.fingerprint === fp) return { written: null, superseded: null };
  const written = await repo.insertReport(tx, {
    organizationId: subject.organizationId,
    projectId: subject.projectId,
    slug: randomSlug('drift'),
    reportType: subject.reportType,
    status: 'open',
    severity: body.severity,
    summary: body.summary,
    changes: body.changes,
    impacts: body.impacts,
    dataSourceId: subject.dataSourceId ?? null,
    pipelineId: subject.pipelineId ?? null,
    subjectKey: subject.subjectKey,
    fingerprint: fp,
    baseline: open?.baseline ?? baseline,
    createdAt: now,
  });
  if (open) await repo.supersede(tx, open.id, now);
  await recordEvent(
    tx,
    { organizationId: subject.organizationId, actor, requestId },
    {
      // No entity type for drift reports: the event is on its subject
      // (docs/api-conventions.md#events).
      entityType: subject.subject.kind,
      entitySlug: subject.subject.slug,
      action: 'create',
      metadata: {
        drift_report_slug: written.slug,
        report_type: written.reportType,
        severity: written.severity,
        superseded_report_slug: open?.slug ?? null,
        change_count: body.changes.length,
        impact_count: body.impacts.length,
      },
    },
  );
  if (written.severity !== 'safe') await raiseSchemaDriftDetected(tx, deps, written, subject);
  return { written, superseded: open?.slug ?? null };
}

/**
 * The one place a warning or breaking report raises the `schema_drift_detected` notification
 * (docs/alerting.md#notifications), in the transaction that writes the report.
 */
export async function raiseSchemaDriftDetected(
  tx: Tx,
  deps: DriftDeps,
  report: repo.DriftReportRow,
  subject: ReportSubject,
): Promise<void> {
  await raiseNotification(tx, deps, {
    organizationId: report.organizationId,
    type: 'schema_drift_detected',
    severity: report.severity === 'breaking' ? 'error' : 'warning',
    title: `Schema drift on ${subject.subject.kind.replace('_', ' ')} ${subject.subject.slug}`,
    summary: String(report.summary ?? '').slice(0, 1000),
    projectSlug: subject.projectSlug,
    environmentSlug: null,
    subject: subject.subject,
    sourceKind: subject.subject.kind,
    sourceAction: 'create',
    sourceRefs: [
      { kind: subject.subject.kind, value: subject.subject.slug },
      { kind: 'drift_report', value: report.slug },
    ],
    sourceKey: `drift:${report.slug}`,
  });
}
