import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { PlacePicker } from '../components/place-picker';
import {
  Badge,
  Button,
  Card,
  ErrorNote,
  Field,
  Input,
  Select,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';

import { formatTime, shortHash } from '../lib/format';
import { usePlace } from '../lib/hooks';
import { dataSourcePickerQuery } from '../lib/queries/data-sources';
import {
  bindDataSource,
  bindingsQuery,
  checkpointsQuery,
  deploymentsQuery,
  deployPipeline,
  pipelineKeys,
  refsQuery,
  resetCheckpoints,
  validatePipeline,
} from '../lib/queries/pipelines';
import { executePipeline } from '../lib/queries/runs';
import type { Version } from '../lib/types';

type Props = {
  org: string;
  project: string;
  pipeline: string;
  env?: string;
  onEnv: (env: string | undefined) => void;
};

/** Bindings, validation, deploy and execute of one pipeline in one environment. */
export function DeployPanel(props: Props & { versions: Version[] }) {
  const { org, project, pipeline } = props;
  const place = usePlace(org, { project, env: props.env });
  const env = place.environment;
  const at = { organization: org, project, environment: place.env ?? '', pipeline };
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [hash, setHash] = useState(props.versions[0]?.spec_hash ?? '');
  const [confirmation, setConfirmation] = useState('');
  const confirm = env?.protected && confirmation ? { protected_environment_confirmation: confirmation } : {};

  const refs = useQuery(refsQuery(at));
  const bindings = useQuery(bindingsQuery(at));
  const sources = useQuery(dataSourcePickerQuery(org));
  const deployments = useQuery(deploymentsQuery(at));
  const bind = useMutation({
    mutationFn: (v: { ref: string; ds: string }) => bindDataSource(at, v.ref, v.ds, confirm),
    onSuccess: () => qc.invalidateQueries({ queryKey: pipelineKeys.bindings(at) }),
  });
  const validate = useMutation({ mutationFn: () => validatePipeline(at, hash) });
  const deploy = useMutation({
    mutationFn: () => deployPipeline(at, hash, confirm),
    onSuccess: () => qc.invalidateQueries({ queryKey: pipelineKeys.deployments(at) }),
  });
  const execute = useMutation({
    mutationFn: () => executePipeline(at, confirm),
    onSuccess: (run) =>
      navigate({
        to: '/o/$org/runs/$project/$env/$run',
        params: { org, project, env: place.env!, run: run.slug },
        search: {},
      }),
  });
  const boundTo = new Map(
    (bindings.data?.data_source_bindings ?? []).map((b) => [b.data_source_ref_slug, b.data_source_slug]),
  );
  const active = deployments.data?.deployments.find((d) => d.active);

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end gap-4">
        <PlacePicker
          projects={[{ slug: project, name: project }]}
          environments={place.envs.data?.environments ?? []}
          project={project}
          env={place.env}
          onChange={(p) => props.onEnv(p.env)}
        />
        <div>
          <label
            htmlFor="deploy-version"
            className="block text-xs font-medium text-slate-600 dark:text-slate-400"
          >
            Version
          </label>
          <Select id="deploy-version" value={hash} onChange={(e) => setHash(e.target.value)}>
            {props.versions.map((v) => (
              <option key={v.spec_hash} value={v.spec_hash}>
                {shortHash(v.spec_hash)} · {formatTime(v.created_at)}
              </option>
            ))}
          </Select>
        </div>
        {env?.protected && <Badge tone="amber">protected environment</Badge>}
      </div>
      <Card title="Data source bindings">
        <table className={tableClass}>
          <thead>
            <tr>
              <th scope="col" className={thClass}>
                Ref
              </th>
              <th scope="col" className={thClass}>
                Data source in {place.env}
              </th>
            </tr>
          </thead>
          <tbody>
            {refs.data?.data_source_refs.map((r) => (
              <tr key={r.slug}>
                <td className={`${tdClass} font-mono text-xs`}>{r.slug}</td>
                <td className={tdClass}>
                  <Select
                    aria-label={`Data source for ${r.slug}`}
                    value={boundTo.get(r.slug) ?? ''}
                    onChange={(e) => e.target.value && bind.mutate({ ref: r.slug, ds: e.target.value })}
                  >
                    <option value="">Not bound</option>
                    {sources.data?.data_sources.map((d) => (
                      <option key={d.slug} value={d.slug}>
                        {d.name} ({d.type})
                      </option>
                    ))}
                  </Select>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <div className="mt-2">
          <ErrorNote error={bind.error} />
        </div>
      </Card>
      <Card title="Validate and deploy">
        <div className="space-y-3">
          {env?.protected && (
            <div className="max-w-sm">
              <Field label={`Type ${env.slug} to change what runs in this protected environment`}>
                {({ id }) => (
                  <Input
                    id={id}
                    value={confirmation}
                    onChange={(e) => setConfirmation(e.target.value)}
                    autoComplete="off"
                  />
                )}
              </Field>
            </div>
          )}
          <div className="flex flex-wrap gap-2">
            <Button onClick={() => validate.mutate()} disabled={validate.isPending}>
              Validate
            </Button>
            <Button variant="primary" onClick={() => deploy.mutate()} disabled={deploy.isPending}>
              Deploy {shortHash(hash)} to {place.env}
            </Button>
            <Button onClick={() => execute.mutate()} disabled={execute.isPending || !active}>
              Execute now
            </Button>
          </div>
          {validate.data && (
            <div role="status" data-testid="validation-result" className="text-sm">
              {validate.data.valid ? <Badge tone="green">valid</Badge> : <Badge tone="red">invalid</Badge>}{' '}
              {validate.data.findings.length} finding(s)
              <ul className="mt-1 list-disc pl-5">
                {validate.data.findings.map((f) => (
                  <li key={`${f.path}${f.code}`}>
                    <Badge tone={f.severity === 'error' ? 'red' : 'amber'}>{f.code}</Badge>{' '}
                    <code>{f.path}</code> {f.message}
                  </li>
                ))}
              </ul>
            </div>
          )}
          {deploy.isSuccess && (
            <p role="status" className="text-sm">
              Deployed <code>{shortHash(deploy.data.spec_hash)}</code> to {place.env}.
            </p>
          )}
          <ErrorNote error={validate.error ?? deploy.error ?? execute.error} />
          <p className="text-sm text-slate-600 dark:text-slate-400">
            Active deployment: {active ? <code>{shortHash(active.spec_hash)}</code> : 'none'}
          </p>
        </div>
      </Card>
    </div>
  );
}

export function CheckpointsPanel(props: Props) {
  const { org, project, pipeline } = props;
  const place = usePlace(org, { project, env: props.env });
  const at = { organization: org, project, environment: place.env ?? '', pipeline };
  const [confirmation, setConfirmation] = useState('');
  const qc = useQueryClient();
  const list = useQuery(checkpointsQuery(at));
  const reset = useMutation({
    mutationFn: () =>
      resetCheckpoints(at, confirmation ? { protected_environment_confirmation: confirmation } : {}),
    onSuccess: () => qc.invalidateQueries({ queryKey: pipelineKeys.checkpoints(at) }),
  });
  return (
    <div className="space-y-4">
      <PlacePicker
        projects={[{ slug: project, name: project }]}
        environments={place.envs.data?.environments ?? []}
        project={project}
        env={place.env}
        onChange={(p) => props.onEnv(p.env)}
      />
      <Card title="Incremental cursors">
        <ErrorNote error={list.error ?? reset.error} />
        {list.data?.checkpoints.length === 0 ? (
          <p className="text-sm text-slate-600 dark:text-slate-400">
            No cursors: the next run reads from the start.
          </p>
        ) : (
          <table className={tableClass}>
            <thead>
              <tr>
                <th scope="col" className={thClass}>
                  Step
                </th>
                <th scope="col" className={thClass}>
                  Cursor
                </th>
                <th scope="col" className={thClass}>
                  Committed by run
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data?.checkpoints.map((c) => (
                <tr key={c.step_slug}>
                  <td className={`${tdClass} font-mono text-xs`}>{c.step_slug}</td>
                  <td className={`${tdClass} font-mono text-xs`}>{JSON.stringify(c.cursor)}</td>
                  <td className={`${tdClass} font-mono text-xs`}>{c.run_slug ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <div className="mt-3 flex items-end gap-2">
          {place.environment?.protected && (
            <Field label={`Type ${place.env} to confirm`}>
              {({ id }) => (
                <Input id={id} value={confirmation} onChange={(e) => setConfirmation(e.target.value)} />
              )}
            </Field>
          )}
          <Button variant="danger" onClick={() => reset.mutate()} disabled={reset.isPending}>
            Reset cursors
          </Button>
        </div>
      </Card>
    </div>
  );
}
