import { Badge, Card, Empty, tableClass, tdClass, thClass } from '../components/ui';

// The body of a drift impact report (docs/drift-and-contracts.md): normalized changes with their
// reason codes, and the impacts on bound pipelines naming the step, edge or sink.

export type { DriftPreview, DriftReport } from '../lib/queries/drift';

import type { DriftPreview } from '../lib/queries/drift';

export type Change = DriftPreview['changes'][number];
export type Impact = DriftPreview['impacts'][number];
export type Severity = DriftPreview['severity'];

export const SeverityBadge = ({ severity }: { severity: Severity }) => (
  <span data-severity={severity}>
    <Badge tone={severity === 'breaking' ? 'red' : severity === 'warning' ? 'amber' : 'green'}>
      {severity}
    </Badge>
  </span>
);

export function ReportBody({ report }: { report: DriftPreview }) {
  return (
    <div className="space-y-4">
      <Card title={`Changes (${report.changes.length})`}>
        {report.changes.length === 0 ? (
          <Empty>No schema change.</Empty>
        ) : (
          <table className={tableClass} data-testid="drift-changes">
            <caption className="sr-only">Normalized changes</caption>
            <thead>
              <tr>
                {['Severity', 'Reason', 'Path', 'Before', 'After'].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {report.changes.map((c) => (
                <tr key={`${c.kind}:${c.path}:${c.reason_code}`}>
                  <td className={tdClass}>
                    <SeverityBadge severity={c.severity} />
                  </td>
                  <td className={`${tdClass} font-mono text-xs`}>{c.reason_code}</td>
                  <td className={`${tdClass} font-mono text-xs`}>{c.path}</td>
                  <td className={`${tdClass} font-mono text-xs`}>{c.before ?? '—'}</td>
                  <td className={`${tdClass} font-mono text-xs`}>{c.after ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
      <Card title={`Impacts (${report.impacts.length})`}>
        {report.impacts.length === 0 ? (
          <Empty>No pipeline binds this data source.</Empty>
        ) : (
          <table className={tableClass} data-testid="drift-impacts">
            <caption className="sr-only">Impacts on bound pipelines</caption>
            <thead>
              <tr>
                {['Severity', 'Kind', 'Pipeline', 'Step / edge', 'What happens'].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {report.impacts.map((i, n) => (
                // Impacts have no identity of their own; their order is the report's.
                // biome-ignore lint/suspicious/noArrayIndexKey: see above
                <tr key={n} data-impact={i.kind}>
                  <td className={tdClass}>
                    <SeverityBadge severity={i.severity} />
                  </td>
                  <td className={`${tdClass} text-xs`}>{i.kind.replace('_', ' ')}</td>
                  <td className={`${tdClass} font-mono text-xs`}>{i.pipeline_slug ?? '—'}</td>
                  <td className={`${tdClass} font-mono text-xs`}>{i.edge_slug ?? i.step_slug ?? '—'}</td>
                  <td className={`${tdClass} text-xs`}>{i.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
    </div>
  );
}
