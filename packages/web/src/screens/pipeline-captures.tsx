import { useQuery } from '@tanstack/react-query';
import { Badge, Card, ErrorNote, tableClass, tdClass, thClass } from '../components/ui';
import { formatBytes, formatTime } from '../lib/format';
import { type PipelineCapture, pipelineCapturesQuery } from '../lib/queries/captures';

// The change data captures of the pipeline's cdc steps, per environment (docs/cdc.md "Slot
// safety"): what each keeps on its source, and when a run last committed its position.

function StatusBadge({ c }: { c: PipelineCapture }) {
  if (c.status === 'unreachable') return <Badge tone="red">unreachable</Badge>;
  if (c.status === 'missing') return <Badge>not created yet</Badge>;
  if (c.wal_status === 'lost' || c.wal_status === 'unreserved')
    return <Badge tone="red">{c.wal_status}</Badge>;
  return c.active ? <Badge tone="green">reading</Badge> : <Badge>idle</Badge>;
}

export function CapturesPanel(props: { org: string; project: string; pipeline: string }) {
  const at = { organization: props.org, project: props.project, pipeline: props.pipeline };
  const list = useQuery(pipelineCapturesQuery(at));
  const rows = list.data?.captures ?? [];
  return (
    <Card title="Change data capture">
      <ErrorNote error={list.error} />
      {list.data && rows.length === 0 ? (
        <p className="text-sm text-slate-600 dark:text-slate-400">
          No deployed cdc source step: nothing is kept on a source for this pipeline.
        </p>
      ) : (
        <table className={tableClass}>
          <thead>
            <tr>
              {[
                'Step',
                'Environment',
                'Data source',
                'State',
                'Log retained',
                'Confirmed position',
                'Last checkpoint',
              ].map((h) => (
                <th key={h} scope="col" className={thClass}>
                  {h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((c) => (
              <tr key={c.capture_name} title={c.capture_name}>
                <td className={`${tdClass} font-mono text-xs`}>{c.step_slug}</td>
                <td className={tdClass}>{c.environment_slug}</td>
                <td className={tdClass}>{c.data_source_slug}</td>
                <td className={tdClass}>
                  <StatusBadge c={c} />
                  {c.error && (
                    <span className="ml-2 text-xs text-red-700 dark:text-red-300">{c.error.message}</span>
                  )}
                </td>
                <td className={`${tdClass} tabular-nums`}>
                  {c.lag_bytes === null ? '—' : formatBytes(c.lag_bytes)}
                </td>
                <td className={`${tdClass} font-mono text-xs`}>{c.confirmed_position ?? '—'}</td>
                <td className={tdClass}>
                  {c.last_checkpoint_at ? formatTime(c.last_checkpoint_at) : 'never'}
                  {c.retention_expires_at && (
                    <span className="block text-xs text-slate-600 dark:text-slate-400">
                      binlog may be purged from {formatTime(c.retention_expires_at)}
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Card>
  );
}
