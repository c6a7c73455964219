import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Button, Card, ErrorNote, Field, Input, Select } from '../components/ui';
import type { DataSourcePath } from '../lib/queries/places';
import { proofSettingsQuery, putProofSettings } from '../lib/queries/proof';
import type { Settings, Target } from './proof-types';

/** The proof settings of a data source: whether, where and what to check (the defaults until the first save). */
export function SettingsCard(props: { at: DataSourcePath }) {
  const qc = useQueryClient();
  const settings = proofSettingsQuery(props.at);
  const got = useQuery(settings);
  const [s, setS] = useState<
    Pick<Settings, 'enabled' | 'publish_checks' | 'expected_repository_id' | 'targets'>
  >({
    enabled: true,
    publish_checks: false,
    expected_repository_id: '',
    targets: [],
  });
  // Before the first save the server answers its defaults (disabled); the form keeps offering
  // to enable proof instead.
  const notSetUp = got.data === null || got.data?.created_at === null;
  useEffect(() => {
    if (got.data && got.data.created_at !== null) setS(got.data);
  }, [got.data]);
  const save = useMutation({
    mutationFn: () =>
      putProofSettings(props.at, {
        enabled: s.enabled,
        publish_checks: s.publish_checks,
        // The API takes the expected id as a string; an empty one means "not checked".
        expected_repository_id: s.expected_repository_id ?? '',
        targets: s.targets,
      }),
    onSuccess: (v) => qc.setQueryData(settings.queryKey, v),
  });
  const setTarget = (i: number, t: Partial<Target>) =>
    setS({ ...s, targets: s.targets.map((x, n) => (n === i ? { ...x, ...t } : x)) });
  return (
    <Card title="Proof settings">
      <ErrorNote error={got.error} />
      {notSetUp && <p className="mb-2 text-sm">Proof is not set up for this data source yet.</p>}
      <form
        className="space-y-3"
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <div className="flex flex-wrap gap-6 text-sm">
          <label className="flex items-center gap-2">
            <input
              type="checkbox"
              checked={s.enabled}
              onChange={(e) => setS({ ...s, enabled: e.target.checked })}
            />
            Enabled (checks the repository id)
          </label>
          <label className="flex items-center gap-2">
            <input
              type="checkbox"
              checked={s.publish_checks}
              onChange={(e) => setS({ ...s, publish_checks: e.target.checked })}
            />
            Publish a check on the commit
          </label>
        </div>
        <div className="max-w-xl">
          <Field
            label="Expected repository id"
            hint="GitHub repository id, GitLab project id, or the root commit SHA for plain git (git rev-list --max-parents=0 HEAD)."
          >
            {({ id, describedBy }) => (
              <Input
                id={id}
                aria-describedby={describedBy}
                value={s.expected_repository_id ?? ''}
                onChange={(e) => setS({ ...s, expected_repository_id: e.target.value })}
              />
            )}
          </Field>
        </div>
        <fieldset>
          <legend className="text-sm font-medium">Targets</legend>
          <ul className="mt-1 space-y-2">
            {s.targets.map((t, i) => (
              // Targets are edited in place; their position is their identity while editing.
              // biome-ignore lint/suspicious/noArrayIndexKey: see above
              <li key={i} className="flex flex-wrap items-center gap-2">
                <Select
                  aria-label={`Kind of target ${i + 1}`}
                  className="w-36"
                  value={t.kind}
                  onChange={(e) => setTarget(i, { kind: e.target.value as Target['kind'] })}
                >
                  <option value="path">path</option>
                  <option value="pipeline">pipeline</option>
                  <option value="contract">contract</option>
                </Select>
                <Input
                  aria-label={`Ref of target ${i + 1}`}
                  className="w-full max-w-80"
                  value={t.ref}
                  onChange={(e) => setTarget(i, { ref: e.target.value })}
                />
                <Button
                  variant="ghost"
                  onClick={() => setS({ ...s, targets: s.targets.filter((_, n) => n !== i) })}
                >
                  Remove target {i + 1}
                </Button>
              </li>
            ))}
          </ul>
          <Button
            className="mt-2"
            onClick={() => setS({ ...s, targets: [...s.targets, { kind: 'path', ref: '' }] })}
          >
            Add target
          </Button>
        </fieldset>
        <ErrorNote error={save.error} />
        {save.isSuccess && (
          <p role="status" className="text-sm">
            Saved.
          </p>
        )}
        <Button type="submit" variant="primary" disabled={save.isPending}>
          Save proof settings
        </Button>
      </form>
    </Card>
  );
}
