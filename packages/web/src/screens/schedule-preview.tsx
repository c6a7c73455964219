import { useEffect, useState } from 'react';
import { Badge, ErrorNote, tableClass, tdClass, thClass } from '../components/ui';
import type { EnvPipelinePath } from '../lib/queries/places';
import { type Confirm, previewSchedule } from '../lib/queries/triggers';
import type { Preview } from './trigger-types';

const dstLabel = { gap_shifted: 'moved past a DST gap', repeated: 'repeated wall time' } as const;

/** The next fire times of the schedule as typed, asked of the server with ?dry_run=true. */
export function SchedulePreview(props: {
  at: EnvPipelinePath & { pipeline_trigger_slug?: string };
  body: unknown;
  query: Confirm;
}) {
  const [preview, setPreview] = useState<Preview | null>(null);
  const [error, setError] = useState<unknown>(null);
  const key = JSON.stringify(props.body);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the body is compared by its JSON.
  useEffect(() => {
    let live = true;
    const t = window.setTimeout(async () => {
      try {
        const p = (await previewSchedule(props.at, props.body, props.query)) as Preview;
        if (live) {
          setPreview(p);
          setError(null);
        }
      } catch (e) {
        if (live) {
          setError(e);
          setPreview(null);
        }
      }
    }, 350);
    return () => {
      live = false;
      window.clearTimeout(t);
    };
  }, [key, props.at.pipeline_trigger_slug, props.at.environment]);
  return (
    <section aria-label="Preview of the next fire times" aria-live="polite" data-testid="schedule-preview">
      <ErrorNote error={error} />
      {preview && (
        <>
          <p className="mb-1 text-xs text-slate-600 dark:text-slate-400">
            Next {preview.next_fire_times.length} fire times in {preview.time_zone} (zone rules{' '}
            {preview.tz_version}); nothing is saved until you press the button.
          </p>
          <table className={tableClass}>
            <thead>
              <tr>
                {['Local time', 'Fires at (UTC)', 'DST'].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {preview.next_fire_times.map((f) => (
                <tr key={f.nominal_at} data-dst={f.dst}>
                  <td className={`${tdClass} font-mono text-xs`}>{f.local_time}</td>
                  <td className={`${tdClass} font-mono text-xs`}>{f.fire_at}</td>
                  <td className={tdClass}>
                    {f.dst === 'none' ? (
                      ''
                    ) : (
                      <Badge tone="amber">{dstLabel[f.dst as keyof typeof dstLabel]}</Badge>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
