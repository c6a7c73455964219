import type { CaptureStatus } from '@sluice/connectors';
import type { Deps } from '../../context';
import { raiseNotification, resolveNotification } from '../notifications/index';
import { activeDeployments } from './captures.repo';
import { type OwnedCapture, ownedCaptures } from './owned';
import { readOwnedStatuses, retentionExpiresAt } from './statuses';

// The periodic slot safety check (docs/cdc.md "Slot safety", docs/alerting.md): every capture
// of a deployed cdc step whose source can be read is compared with the bounds
// SLUICE_CDC_LAG_ALERT_BYTES and SLUICE_CDC_INACTIVE_ALERT_MINUTES; a MySQL/MariaDB capture also
// with its binlog retention.

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;
const size = (n: number) => (n >= GIB ? `${(n / GIB).toFixed(1)} GiB` : `${(n / MIB).toFixed(1)} MiB`);

const subjectOf = (o: OwnedCapture) => ({ kind: 'capture', slug: o.name.replace(/_/g, '-') });

export type CheckResult = { checked: number; lagging: number; inactive: number; unreachable: number };

export async function checkCaptures(deps: Deps): Promise<CheckResult> {
  const now = deps.clock?.() ?? new Date();
  const { lagAlertBytes, inactiveAlertMinutes } = deps.config.cdc;
  const owned = ownedCaptures(await activeDeployments(deps.db, null, null, true));
  const reads = await readOwnedStatuses(deps, owned);
  const result: CheckResult = { checked: 0, lagging: 0, inactive: 0, unreachable: 0 };
  for (const o of owned) {
    const read = reads.get(o.name);
    if (!read?.statuses) {
      result.unreachable++;
      continue;
    }
    const status = read.statuses.find((s) => s.name === o.name);
    // Not created yet (no run since the deployment) or gone: nothing is held back.
    if (!status) continue;
    result.checked++;
    const base = {
      organizationId: o.organizationId,
      projectSlug: o.projectSlug,
      environmentSlug: o.environmentSlug,
      subject: subjectOf(o),
    };
    const raise = {
      ...base,
      sourceKind: 'data_source' as const,
      sourceAction: 'read' as const,
      sourceRefs: [
        { kind: 'pipeline', value: o.pipelineSlug },
        { kind: 'environment', value: o.environmentSlug },
        { kind: 'data_source', value: o.dataSource.slug },
        { kind: 'step', value: o.stepSlug },
      ],
      sourceKey: `${o.name}:${now.toISOString()}`,
      occurredAt: now,
    };
    const where = `step ${o.stepSlug} of pipeline ${o.pipelineSlug} in ${o.environmentSlug} (capture ${o.name} on ${o.dataSource.slug})`;
    const lag = status.lag_bytes ?? 0;
    const lagging = status.lag_bytes !== null && lag > lagAlertBytes;
    const lost = status.wal_status === 'lost' || status.wal_status === 'unreserved';
    const purge = purgeRisk(status, o.lastCheckpointAt, now);
    const idleSince = o.lastCheckpointAt ?? o.deployedAt;
    const idleMinutes = (now.getTime() - idleSince.getTime()) / 60_000;
    const inactive = !status.active && idleMinutes > inactiveAlertMinutes;
    await deps.db.transaction(async (tx) => {
      if (purge) {
        result.lagging++;
        await raiseNotification(tx, deps, {
          ...raise,
          type: 'cdc_capture_lagging',
          severity: purge.critical ? 'critical' : 'warning',
          title: `CDC capture of ${o.pipelineSlug}/${o.stepSlug}: ${purge.title}`,
          summary: `${purge.summary} for ${where}. Let the pipeline run, or raise binlog_expire_logs_seconds.`,
        });
      } else if (lagging || lost) {
        result.lagging++;
        await raiseNotification(tx, deps, {
          ...raise,
          type: 'cdc_capture_lagging',
          severity: lost || lag >= 4 * lagAlertBytes ? 'critical' : 'warning',
          title: `CDC capture of ${o.pipelineSlug}/${o.stepSlug} retains ${size(lag)} of log`,
          summary: `The source keeps ${size(lag)} of log for ${where}, over the bound of ${size(lagAlertBytes)}${
            lost ? `; its WAL status is ${status.wal_status}` : ''
          }. Let the pipeline run, or undeploy it to drop the capture.`,
        });
      } else {
        await resolveNotification(tx, deps, { ...base, type: 'cdc_capture_lagging' });
      }
      if (inactive) {
        result.inactive++;
        await raiseNotification(tx, deps, {
          ...raise,
          type: 'cdc_capture_inactive',
          severity: 'warning',
          title: `CDC capture of ${o.pipelineSlug}/${o.stepSlug} has not advanced for ${Math.floor(idleMinutes)} minutes`,
          summary: `No run has committed a position of ${where} since ${idleSince.toISOString()} (bound: ${inactiveAlertMinutes} minutes), so the source keeps its log. Run the pipeline, or undeploy it to drop the capture.`,
        });
      } else {
        await resolveNotification(tx, deps, { ...base, type: 'cdc_capture_inactive' });
      }
    });
  }
  return result;
}

/**
 * A log purged by age (MySQL/MariaDB): critical when the committed position's binlog is gone
 * (the next run fails: changes were lost), a warning once less than half the retention is left
 * before the server may purge it; null otherwise.
 */
function purgeRisk(status: CaptureStatus, lastCheckpointAt: Date | null, now: Date) {
  if (!status.retention) return null;
  if (status.lag_bytes === null) {
    return {
      critical: true,
      title: 'its binlog was purged',
      summary: `The server no longer keeps the binlog of the committed position ${status.confirmed_position} (binlog retention): the next run fails and a checkpoint reset takes a new snapshot`,
    };
  }
  const expires = retentionExpiresAt(status, lastCheckpointAt);
  const seconds = status.retention.seconds;
  if (!expires || seconds === null) return null;
  const left = (expires.getTime() - now.getTime()) / 1000;
  if (left >= seconds / 2) return null;
  const hours = Math.max(0, left / 3600).toFixed(1);
  return {
    critical: left <= 0,
    title: left <= 0 ? 'its binlog may be purged now' : `its binlog may be purged in ${hours} h`,
    summary: `The server may purge the binlog of the committed position ${status.confirmed_position} from ${expires.toISOString()} (retention ${seconds} s after its last write, about the last checkpoint)`,
  };
}
