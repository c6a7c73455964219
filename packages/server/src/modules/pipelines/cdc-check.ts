import { ConnectorError, connectorFor, optionalCapability } from '@sluice/connectors';
import type { Finding, PipelineSpec } from '@sluice/engine';
import type { Deps } from '../../context';
import type { DbOrTx } from '../../db/client';
import { findDataSource, loadConnection } from '../data-sources/index';
import type { BindingView } from './bindings.repo';

// Validation of change-data-capture source steps (docs/cdc.md "Requirements"): the bound
// connector must offer change capture, and its own check (the server's settings, the role, each
// table's key or replica identity) turns into findings at the table's path in the operation.

export type CdcDeps = Pick<Deps, 'config' | 'keyring' | 'log' | 'queue' | 'clock'>;

export async function cdcFindings(
  db: DbOrTx,
  deps: CdcDeps | null,
  organizationId: string,
  spec: PipelineSpec,
  bound: Map<string, BindingView>,
): Promise<Finding[]> {
  const out: Finding[] = [];
  for (const [i, s] of spec.steps.entries()) {
    const op = s.operation;
    if (op.operation_type !== 'cdc' || s.kind !== 'source' || !s.data_source_ref) continue;
    const b = bound.get(s.data_source_ref);
    // An unbound ref or another type was reported by the binding checks.
    if (!b?.dataSourceActive || !['postgres', 'mysql'].includes(b.dataSourceType)) continue;
    const changes = optionalCapability(connectorFor(b.dataSourceType), 'changes');
    if (!changes) {
      out.push({
        code: 'CONNECTOR_CAPABILITY_MISSING',
        message: `the ${b.dataSourceType} connector cannot capture changes yet (${s.slug})`,
        path: `steps[${i}].operation.operation_type`,
        severity: 'error',
      });
      continue;
    }
    if (!deps) continue;
    const notChecked = (why: string): Finding => ({
      code: 'CDC_NOT_CHECKED',
      message: `the tables of ${s.slug} were not checked: ${why}`,
      path: `steps[${i}].data_source_ref`,
      severity: 'warning',
    });
    const row = await findDataSource(db, organizationId, b.dataSourceSlug);
    if (!row) continue;
    let loaded: Awaited<ReturnType<typeof loadConnection>>;
    try {
      loaded = await loadConnection(db, deps, row);
    } catch {
      out.push(notChecked(`the credentials of data source ${row.slug} could not be read`));
      continue;
    }
    try {
      const findings = await changes.check(loaded.connection, op, loaded.ctx);
      for (const f of findings) {
        const t = op.tables.indexOf(f.table);
        out.push({
          code: f.code,
          message: f.message,
          path: t >= 0 ? `steps[${i}].operation.tables[${t}]` : `steps[${i}].data_source_ref`,
          severity: 'error',
        });
      }
    } catch (err) {
      out.push(notChecked(err instanceof ConnectorError ? err.message : `${row.slug} could not be reached`));
    }
  }
  return out;
}
