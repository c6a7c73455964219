import type { CaptureStatus } from '@sluice/connectors';
import type { Deps } from '../../context';
import { AppError } from '../../http/errors';
import {
  capabilityFor,
  type DataSourceRow,
  dataSourceById,
  describeFailure,
  type Failure,
  loadConnection,
} from '../data-sources/index';
import { CAPTURE_PREFIX } from './capture-name';

// Asking a data source for its captures (docs/cdc.md "Slot safety"). Network calls happen
// outside any transaction.

export type StatusRead = { statuses: CaptureStatus[]; failure: null } | { statuses: null; failure: Failure };

type ReadDeps = Pick<Deps, 'db' | 'config' | 'keyring' | 'log' | 'queue' | 'clock'>;

/** The `sluice_` captures on a data source, or why they could not be read (never a throw). */
export async function readStatuses(deps: ReadDeps, row: DataSourceRow): Promise<StatusRead> {
  try {
    const changes = capabilityFor(row.type, 'changes');
    const loaded = await loadConnection(deps.db, deps, row);
    return { statuses: await changes.captures(loaded.connection, CAPTURE_PREFIX, loaded.ctx), failure: null };
  } catch (err) {
    if (err instanceof AppError) return { statuses: null, failure: { code: err.code, message: err.message } };
    const { failure, unexpected } = describeFailure(err);
    if (unexpected) deps.log.error({ err, dataSource: row.slug }, 'reading captures failed unexpectedly');
    return { statuses: null, failure };
  }
}

/** readStatuses of each data source once, by id. */
export async function readStatusesOf(
  deps: ReadDeps,
  ids: Iterable<string>,
): Promise<Map<string, StatusRead>> {
  const out = new Map<string, StatusRead>();
  for (const id of new Set(ids)) {
    const row = await dataSourceById(deps.db, id);
    out.set(
      id,
      row
        ? await readStatuses(deps, row)
        : { statuses: null, failure: { code: 'NOT_FOUND', message: 'the data source is gone' } },
    );
  }
  return out;
}

/**
 * For a connector that keeps nothing on the server (MySQL, docs/cdc.md "What each capture holds
 * back"): the capture's status from the step's committed checkpoint; null when the connector
 * lists its captures itself or nothing was committed yet.
 */
export async function positionStatus(
  deps: ReadDeps,
  capture: { name: string; cursor: string | null; dataSource: { id: string; type: string } },
): Promise<StatusRead | null> {
  const changes = capabilityFor(capture.dataSource.type, 'changes');
  if (!changes.positionLag || capture.cursor === null) return null;
  const row = await dataSourceById(deps.db, capture.dataSource.id);
  if (!row) return { statuses: null, failure: { code: 'NOT_FOUND', message: 'the data source is gone' } };
  try {
    const loaded = await loadConnection(deps.db, deps, row);
    const lag = await changes.positionLag(loaded.connection, capture.cursor, loaded.ctx);
    return { statuses: [{ name: capture.name, active: false, ...lag }], failure: null };
  } catch (err) {
    if (err instanceof AppError) return { statuses: null, failure: { code: err.code, message: err.message } };
    const { failure, unexpected } = describeFailure(err);
    if (unexpected)
      deps.log.error({ err, dataSource: row.slug }, 'reading a capture position failed unexpectedly');
    return { statuses: null, failure };
  }
}

/**
 * Each owned capture's read: its own position status where the connector keeps nothing on the
 * server (MySQL), else the data source's capture list (read once per data source).
 */
export async function readOwnedStatuses(
  deps: ReadDeps,
  owned: { name: string; cursor: string | null; dataSource: { id: string; type: string } }[],
): Promise<Map<string, StatusRead>> {
  const listed = owned.filter((o) => !capabilityFor(o.dataSource.type, 'changes').positionLag);
  const reads = await readStatusesOf(
    deps,
    listed.map((o) => o.dataSource.id),
  );
  const out = new Map<string, StatusRead>();
  for (const o of owned) {
    const read = listed.includes(o) ? reads.get(o.dataSource.id) : await positionStatus(deps, o);
    out.set(o.name, read ?? { statuses: [], failure: null });
  }
  return out;
}

/**
 * A log purged by age (MySQL/MariaDB, docs/cdc.md "Alerts"): the earliest time the server may
 * purge the binlog holding the committed position. That binlog was still written when the
 * position was read, so it is kept at least the retention from about the last checkpoint; null
 * while it is the binlog being written, without retention, or before the first checkpoint.
 */
export function retentionExpiresAt(status: CaptureStatus | undefined, lastCheckpointAt: Date | null) {
  const r = status?.retention;
  if (!r || r.seconds === null || r.in_current_log || !lastCheckpointAt) return null;
  return new Date(lastCheckpointAt.getTime() + r.seconds * 1000);
}
