import { type Actor, systemActor } from '../../context';
import type { Tx } from '../../db/client';
import { randomSlug } from '../../http/fields';
import { recordEvent } from '../events/events.record';
import * as repo from './drift.repo';
import { fingerprint, type ReportBody } from './report';

// Persisting reports (DECISIONS.md §12): one open report per subject; a new report supersedes
// it; identical changes (same fingerprint as the open report) are not written again; the
// baseline of the open report is carried forward so the diff stays cumulative.

export type ReportSubject = {
  organizationId: string;
  projectId: string | null;
  reportType: 'source_schema' | 'contract_impact';
  subjectKey: string;
  dataSourceId?: string;
  pipelineId?: string;
};

export type WriteOutcome = { written: repo.DriftReportRow | null; superseded: string | null };

export async function writeReport(
  tx: Tx,
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
      entityType: 'drift_report',
      entitySlug: written.slug,
      action: 'create',
      metadata: {
        report_type: written.reportType,
        severity: written.severity,
        superseded_report_slug: open?.slug ?? null,
        change_count: body.changes.length,
        impact_count: body.impacts.length,
      },
    },
  );
  if (written.severity !== 'safe') await raiseSchemaDriftDetected(tx, written);
  return { written, superseded: open?.slug ?? null };
}

/**
 * The one place a warning or breaking report raises the `schema_drift_detected` notification
 * (DECISIONS.md §10), in the transaction that writes the report. The notifications module is
 * built on its own branch: when it is merged, call its raise function here with the subject
 * (the data source, or the pipeline of a contract_impact report) and the report's severity
 * (breaking → error, warning → warning). Until then the report and its `create` event are the
 * whole record.
 */
export async function raiseSchemaDriftDetected(_tx: Tx, _report: repo.DriftReportRow): Promise<void> {}
