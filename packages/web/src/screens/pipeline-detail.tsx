import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { lazy, Suspense, useState } from 'react';
import { Button, Card, ErrorNote, PageHeader, Select } from '../components/ui';

import { formatTime, shortHash } from '../lib/format';
import { pipelineQuery, pushVersion, versionsQuery } from '../lib/queries/pipelines';
import type { PipelinePath } from '../lib/queries/places';
import { type Spec, specOf, type Version } from '../lib/types';
import { CapturesPanel } from './pipeline-captures';
import { CheckpointsPanel, DeployPanel } from './pipeline-deploy';

const Dag = lazy(() => import('../components/dag').then((m) => ({ default: m.Dag })));
const DiffView = lazy(() => import('../components/code-editor').then((m) => ({ default: m.DiffView })));
const CodeEditor = lazy(() => import('../components/code-editor').then((m) => ({ default: m.CodeEditor })));
const TriggersPanel = lazy(() => import('./triggers').then((m) => ({ default: m.TriggersPanel })));

const TABS = [
  ['overview', 'Graph and versions'],
  ['diff', 'Compare versions'],
  ['deploy', 'Validate, deploy and run'],
  ['checkpoints', 'Checkpoints'],
  ['captures', 'Change capture'],
  ['edit', 'New version'],
  ['triggers', 'Triggers'],
] as const;

const pretty = (spec: unknown) => JSON.stringify(spec, null, 2);

/** Steps added or changed between two specs, for colouring the graph of the newer one. */
function changedSteps(a: Spec, b: Spec): Record<string, string> {
  const before = new Map(a.steps.map((s) => [s.slug, JSON.stringify(s)]));
  const out: Record<string, string> = {};
  for (const s of b.steps) {
    const old = before.get(s.slug);
    if (old === undefined) out[s.slug] = 'added';
    else if (old !== JSON.stringify(s)) out[s.slug] = 'changed';
  }
  return out;
}

export function PipelineDetail() {
  const { org, project, pipeline } = useParams({ from: '/authed/o/$org/pipelines/$project/$pipeline' });
  const search = useSearch({ from: '/authed/o/$org/pipelines/$project/$pipeline' });
  const navigate = useNavigate({ from: '/o/$org/pipelines/$project/$pipeline' });
  const at = { organization: org, project, pipeline };
  const tab = search.tab ?? 'overview';
  const p = useQuery(pipelineQuery(at));
  const versions = useQuery(versionsQuery(at));
  const list = versions.data?.versions ?? [];
  const current = list.find((v) => v.spec_hash === search.version) ?? list[0];
  const setSearch = (patch: Record<string, string | undefined>) =>
    navigate({ search: (s: Record<string, string | undefined>) => ({ ...s, ...patch }), replace: true });

  return (
    <div className="space-y-4">
      <PageHeader
        title={p.data?.name ?? pipeline}
        subtitle={
          <>
            <code>{pipeline}</code> in {project} · latest version{' '}
            <code>{shortHash(p.data?.latest_spec_hash)}</code>
          </>
        }
        actions={
          <Link
            to="/o/$org/pipelines"
            params={{ org }}
            search={{ project }}
            className="rounded-md px-3 py-1.5 text-sm hover:bg-slate-200 dark:hover:bg-slate-800"
          >
            All pipelines
          </Link>
        }
      />
      <ErrorNote error={p.error ?? versions.error} />
      <div
        role="tablist"
        aria-label="Pipeline sections"
        className="flex flex-wrap gap-1 border-b border-slate-200 dark:border-slate-800"
      >
        {TABS.map(([id, label]) => (
          <Link
            key={id}
            role="tab"
            aria-selected={tab === id}
            to="/o/$org/pipelines/$project/$pipeline"
            params={{ org, project, pipeline }}
            search={(s: Record<string, string | undefined>) => ({ ...s, tab: id })}
            className={`-mb-px rounded-t-md border-b-2 px-3 py-2 text-sm ${tab === id ? 'border-blue-600 font-semibold text-blue-800 dark:border-blue-400 dark:text-blue-200' : 'border-transparent text-slate-700 hover:text-slate-900 dark:text-slate-300 dark:hover:text-white'}`}
          >
            {label}
          </Link>
        ))}
      </div>
      {tab === 'overview' && (
        <div className="grid gap-4 xl:grid-cols-[2fr_1fr]">
          <Card title={current ? `Graph of ${shortHash(current.spec_hash)}` : 'Graph'}>
            {current && (
              <Suspense fallback={<div className="h-72" />}>
                <Dag spec={specOf(current)} label={`Graph of version ${shortHash(current.spec_hash)}`} />
              </Suspense>
            )}
          </Card>
          <Card title="Versions">
            <ol className="space-y-1 text-sm">
              {list.map((v) => (
                <li key={v.spec_hash} className="flex items-center justify-between gap-2">
                  <Link
                    to="/o/$org/pipelines/$project/$pipeline"
                    params={{ org, project, pipeline }}
                    search={{ tab: 'overview', version: v.spec_hash }}
                    className={`font-mono text-xs hover:underline ${v.spec_hash === current?.spec_hash ? 'font-bold' : ''} text-blue-700 dark:text-blue-300`}
                  >
                    {shortHash(v.spec_hash)}
                  </Link>
                  <span className="text-xs text-slate-600 dark:text-slate-400">
                    {formatTime(v.created_at)}
                  </span>
                </li>
              ))}
            </ol>
          </Card>
        </div>
      )}
      {tab === 'diff' && <DiffTab versions={list} a={search.a} b={search.b} onPick={setSearch} />}
      {tab === 'deploy' && current && (
        <DeployPanel
          org={org}
          project={project}
          pipeline={pipeline}
          versions={list}
          env={search.env}
          onEnv={(env) => setSearch({ env })}
        />
      )}
      {tab === 'checkpoints' && (
        <CheckpointsPanel
          org={org}
          project={project}
          pipeline={pipeline}
          env={search.env}
          onEnv={(env) => setSearch({ env })}
        />
      )}
      {tab === 'captures' && <CapturesPanel org={org} project={project} pipeline={pipeline} />}
      {tab === 'triggers' && (
        <Suspense fallback={<div className="h-32" />}>
          <TriggersPanel
            org={org}
            project={project}
            pipeline={pipeline}
            env={search.env}
            onEnv={(env) => setSearch({ env })}
          />
        </Suspense>
      )}
      {tab === 'edit' && current && (
        <EditTab
          at={at}
          spec={pretty(current.spec)}
          onPushed={() =>
            void versions.refetch().then(() => setSearch({ tab: 'overview', version: undefined }))
          }
        />
      )}
    </div>
  );
}

function DiffTab(props: {
  versions: Version[];
  a?: string;
  b?: string;
  onPick: (p: { a?: string; b?: string }) => void;
}) {
  const a = props.versions.find((v) => v.spec_hash === props.a) ?? props.versions[1] ?? props.versions[0];
  const b = props.versions.find((v) => v.spec_hash === props.b) ?? props.versions[0];
  const pick = (name: 'a' | 'b', value?: Version) => (
    <div>
      <label
        htmlFor={`diff-${name}`}
        className="block text-xs font-medium text-slate-600 dark:text-slate-400"
      >
        {name === 'a' ? 'Older' : 'Newer'}
      </label>
      <Select
        id={`diff-${name}`}
        value={value?.spec_hash ?? ''}
        onChange={(e) => props.onPick({ [name]: e.target.value })}
      >
        {props.versions.map((v) => (
          <option key={v.spec_hash} value={v.spec_hash}>
            {shortHash(v.spec_hash)} · {formatTime(v.created_at)}
          </option>
        ))}
      </Select>
    </div>
  );
  if (!a || !b) return <p>No versions yet.</p>;
  return (
    <div className="space-y-4">
      <div className="flex gap-3">
        {pick('a', a)}
        {pick('b', b)}
      </div>
      <Suspense fallback={<div className="h-72" />}>
        <Card title="Steps added or changed in the newer version">
          <Dag
            spec={specOf(b)}
            states={changedSteps(specOf(a), specOf(b))}
            label="Graph of the newer version, changed steps highlighted"
          />
        </Card>
        <Card title={`${shortHash(a.spec_hash)} → ${shortHash(b.spec_hash)}`}>
          <DiffView
            a={pretty(a.spec)}
            b={pretty(b.spec)}
            labelA={`Version ${shortHash(a.spec_hash)}`}
            labelB={`Version ${shortHash(b.spec_hash)}`}
          />
        </Card>
      </Suspense>
    </div>
  );
}

function EditTab(props: { at: PipelinePath; spec: string; onPushed: () => void }) {
  const [text, setText] = useState(props.spec);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <Card title="Push a new version">
      <Suspense fallback={<div className="h-72" />}>
        <CodeEditor value={text} onChange={setText} language="json" label="Pipeline spec" minHeight="20rem" />
      </Suspense>
      <div className="mt-3 space-y-2">
        <ErrorNote error={error} />
        <Button
          variant="primary"
          disabled={busy}
          onClick={async () => {
            setError(null);
            setBusy(true);
            try {
              await pushVersion(props.at, JSON.parse(text));
              props.onPushed();
            } catch (e) {
              setError(e);
            } finally {
              setBusy(false);
            }
          }}
        >
          Push version
        </Button>
      </div>
    </Card>
  );
}
