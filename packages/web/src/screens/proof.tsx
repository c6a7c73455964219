import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import {
  Badge,
  Button,
  Card,
  Empty,
  ErrorNote,
  Field,
  Input,
  PageHeader,
  Select,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';
import { ApiError, api, type Page } from '../lib/api';
import { formatTime } from '../lib/format';

// Proof for git, github and gitlab data sources (docs/proof.md): settings with their targets,
// observations at commits, and signed receipts.

type Target = { kind: 'path' | 'pipeline' | 'contract'; ref: string };
type Settings = {
  enabled: boolean;
  publish_checks: boolean;
  expected_repository_id: string;
  targets: Target[];
  updated_at?: string;
};
type Finding = { severity: string; code: string; message: string; path: string | null };
type TargetResult = Target & {
  result: 'pass' | 'warn' | 'fail' | 'error';
  files: string[];
  findings: Finding[];
};
export type Observation = {
  slug: string;
  candidate_slug: string | null;
  repository_id: string | null;
  commit_sha: string | null;
  state: 'running' | 'passed' | 'warned' | 'failed' | 'error';
  targets: TargetResult[];
  inputs: { path: string; sha256: string; size: number }[];
  error: { code: string; message: string } | null;
  digest: string | null;
  observed_at: string | null;
  created_at: string;
};
export type Receipt = {
  slug: string;
  data_source_slug: string;
  candidate_slug: string;
  sequence: number;
  verdict: 'PASSED' | 'WARNED' | 'FAILED';
  observation_slugs: string[];
  digest: string;
  prev_receipt_digest: string | null;
  envelope: { payloadType: string; payload: string; signatures: { keyid: string; sig: string }[] };
  check: { name: string; conclusion: string; published: boolean; error: string | null } | null;
  compiled_at: string;
};

const tone = (s: string) =>
  ['passed', 'pass', 'PASSED'].includes(s)
    ? 'green'
    : ['warned', 'warn', 'WARNED', 'running'].includes(s)
      ? 'amber'
      : ('red' as const);
const linkClass = 'text-blue-700 hover:underline dark:text-blue-300';
const short = (sha: string | null) => (sha ? sha.slice(0, 12) : '—');

function SettingsCard(props: { base: string }) {
  const qc = useQueryClient();
  const key = ['proof-settings', props.base];
  const got = useQuery({
    queryKey: key,
    retry: false,
    queryFn: async () => {
      try {
        return await api.get<Settings>(`${props.base}/proof-settings`);
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) return null;
        throw e;
      }
    },
  });
  const [s, setS] = useState<Settings>({
    enabled: true,
    publish_checks: false,
    expected_repository_id: '',
    targets: [],
  });
  useEffect(() => {
    if (got.data) setS(got.data);
  }, [got.data]);
  const save = useMutation({
    mutationFn: () =>
      api.put<Settings>(`${props.base}/proof-settings`, {
        enabled: s.enabled,
        publish_checks: s.publish_checks,
        expected_repository_id: s.expected_repository_id,
        targets: s.targets,
      }),
    onSuccess: (v) => qc.setQueryData(key, v),
  });
  const setTarget = (i: number, t: Partial<Target>) =>
    setS({ ...s, targets: s.targets.map((x, n) => (n === i ? { ...x, ...t } : x)) });
  return (
    <Card title="Proof settings">
      <ErrorNote error={got.error} />
      {got.data === null && <p className="mb-2 text-sm">Proof is not set up for this data source yet.</p>}
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
                value={s.expected_repository_id}
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
                  className="w-80"
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

/** The proof tab of a git data source: settings, observations and receipts. */
export function ProofPanel(props: { org: string; ds: string }) {
  const base = `/organizations/${props.org}/data-sources/${props.ds}`;
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [at, setAt] = useState('');
  const [picked, setPicked] = useState<string[]>([]);
  const observations = useQuery({
    queryKey: ['observations', base],
    queryFn: () => api.get<Page<'observations', Observation>>(`${base}/proof-observations`, { limit: 50 }),
    refetchInterval: (q) => (q.state.data?.observations.some((o) => o.state === 'running') ? 1000 : false),
  });
  const receipts = useQuery({
    queryKey: ['receipts', base],
    queryFn: () => api.get<Page<'receipts', Receipt>>(`${base}/proof-receipts`, { limit: 50 }),
  });
  const observe = useMutation({
    mutationFn: () =>
      api.post<Observation>(
        `${base}/proof-observations`,
        /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(at) ? { commit_sha: at } : at ? { ref: at } : {},
      ),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['observations', base] }),
  });
  const obs = observations.data?.observations ?? [];
  const head = obs.find((o) => o.slug === picked[picked.length - 1]);
  const compile = useMutation({
    mutationFn: () =>
      api.post<Receipt>(`${base}/proof-receipts:compile`, {
        candidate_slug: head?.candidate_slug,
        observation_slugs: picked,
      }),
    onSuccess: (r) =>
      navigate({
        to: '/o/$org/data-sources/$ds/proof-receipts/$receipt',
        params: { org: props.org, ds: props.ds, receipt: r.slug },
      }),
  });
  return (
    <div className="space-y-4">
      <SettingsCard base={base} />
      <Card title="Observations">
        <div className="mb-3 flex flex-wrap items-end gap-2">
          <div className="w-96">
            <Field label="Commit SHA or branch" hint="Empty: the default branch.">
              {({ id, describedBy }) => (
                <Input
                  id={id}
                  aria-describedby={describedBy}
                  value={at}
                  onChange={(e) => setAt(e.target.value.trim())}
                />
              )}
            </Field>
          </div>
          <Button onClick={() => observe.mutate()} disabled={observe.isPending}>
            Observe
          </Button>
        </div>
        <ErrorNote error={observe.error ?? observations.error} />
        {obs.length === 0 ? (
          <Empty>No observation yet.</Empty>
        ) : (
          <table className={tableClass}>
            <caption className="sr-only">
              Observations, newest first; pick one, or base then head, to compile a receipt
            </caption>
            <thead>
              <tr>
                {['Pick', 'Observation', 'State', 'Commit', 'Targets', 'Observed'].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {obs.map((o) => (
                <tr key={o.slug} data-observation={o.slug}>
                  <td className={tdClass}>
                    <input
                      type="checkbox"
                      aria-label={`Pick observation ${o.slug}`}
                      checked={picked.includes(o.slug)}
                      disabled={o.state === 'running'}
                      onChange={(e) =>
                        setPicked(
                          e.target.checked
                            ? [...picked, o.slug].slice(-2)
                            : picked.filter((p) => p !== o.slug),
                        )
                      }
                    />
                  </td>
                  <td className={`${tdClass} font-mono text-xs`}>{o.slug}</td>
                  <td className={tdClass}>
                    <Badge tone={tone(o.state)}>{o.state}</Badge>
                  </td>
                  <td className={`${tdClass} font-mono text-xs`}>{short(o.commit_sha)}</td>
                  <td className={`${tdClass} text-xs`}>
                    {o.error
                      ? `${o.error.code}: ${o.error.message}`
                      : o.targets.map((t) => `${t.kind} ${t.ref}: ${t.result}`).join('; ')}
                  </td>
                  <td className={`${tdClass} text-xs`}>{formatTime(o.observed_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <div className="mt-3 flex items-center gap-2">
          <Button variant="primary" onClick={() => compile.mutate()} disabled={!head || compile.isPending}>
            Compile receipt
          </Button>
          <span className="text-xs text-slate-600 dark:text-slate-400">
            {picked.length === 2
              ? `base ${picked[0]}, head ${picked[1]}`
              : picked.length === 1
                ? `head ${picked[0]}`
                : 'pick one or two'}
          </span>
        </div>
        <div className="mt-2">
          <ErrorNote error={compile.error} />
        </div>
      </Card>
      <Card title="Receipts">
        <ErrorNote error={receipts.error} />
        {receipts.data?.receipts.length === 0 ? (
          <Empty>No receipt yet.</Empty>
        ) : (
          <table className={tableClass}>
            <caption className="sr-only">Receipts, newest first</caption>
            <thead>
              <tr>
                {['Receipt', 'Sequence', 'Verdict', 'Candidate', 'Compiled'].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {receipts.data?.receipts.map((r) => (
                <tr key={r.slug} data-receipt={r.slug}>
                  <td className={`${tdClass} font-mono text-xs`}>
                    <Link
                      to="/o/$org/data-sources/$ds/proof-receipts/$receipt"
                      params={{ org: props.org, ds: props.ds, receipt: r.slug }}
                      className={linkClass}
                    >
                      {r.slug}
                    </Link>
                  </td>
                  <td className={tdClass}>{r.sequence}</td>
                  <td className={tdClass}>
                    <Badge tone={tone(r.verdict)}>{r.verdict}</Badge>
                  </td>
                  <td className={`${tdClass} font-mono text-xs`}>{r.candidate_slug}</td>
                  <td className={`${tdClass} text-xs`}>{formatTime(r.compiled_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
    </div>
  );
}

/** A signed receipt: the page a published commit check links to. */
export function ProofReceiptPage() {
  const { org, ds, receipt } = useParams({ from: '/authed/o/$org/data-sources/$ds/proof-receipts/$receipt' });
  const base = `/organizations/${org}/data-sources/${ds}`;
  const r = useQuery({
    queryKey: ['receipt', base, receipt],
    queryFn: () => api.get<Receipt>(`${base}/proof-receipts/${receipt}`),
  });
  const observations = useQuery({
    queryKey: ['receipt-observations', base, r.data?.observation_slugs],
    enabled: Boolean(r.data),
    queryFn: () =>
      Promise.all(
        r.data!.observation_slugs.map((o) => api.get<Observation>(`${base}/proof-observations/${o}`)),
      ),
  });
  const d = r.data;
  const receiptUrl = d
    ? URL.createObjectURL(new Blob([JSON.stringify(d, null, 2)], { type: 'application/json' }))
    : undefined;
  useEffect(() => () => (receiptUrl ? URL.revokeObjectURL(receiptUrl) : undefined), [receiptUrl]);
  return (
    <div className="space-y-4">
      <p className="text-sm">
        <Link
          to="/o/$org/data-sources/$ds"
          params={{ org, ds }}
          search={{ tab: 'proof' }}
          className={linkClass}
        >
          ← Proof of {ds}
        </Link>
      </p>
      <ErrorNote error={r.error ?? observations.error} />
      {d && (
        <>
          <PageHeader
            title={`Proof receipt ${d.slug}`}
            subtitle={`Receipt ${d.sequence} of ${ds}, for candidate ${d.candidate_slug}`}
            actions={
              <span className="flex items-center gap-2">
                <span data-testid="receipt-verdict">
                  <Badge tone={tone(d.verdict)}>{d.verdict}</Badge>
                </span>
                <a
                  href={receiptUrl}
                  download={`${d.slug}.json`}
                  className="rounded-md border border-slate-300 px-3 py-1.5 text-sm dark:border-slate-600"
                >
                  Download receipt
                </a>
              </span>
            }
          />
          <Card title="Signature and chain">
            <dl className="grid grid-cols-[max-content_1fr] gap-x-6 gap-y-1 text-sm">
              <dt className="font-medium text-slate-600 dark:text-slate-400">Digest</dt>
              <dd className="break-all font-mono text-xs">{d.digest}</dd>
              <dt className="font-medium text-slate-600 dark:text-slate-400">Previous receipt</dt>
              <dd className="break-all font-mono text-xs">
                {d.prev_receipt_digest ?? 'none: first of the chain'}
              </dd>
              <dt className="font-medium text-slate-600 dark:text-slate-400">Signed by</dt>
              <dd className="break-all font-mono text-xs">
                {d.envelope.signatures.map((s) => s.keyid).join(', ')}
              </dd>
              <dt className="font-medium text-slate-600 dark:text-slate-400">Compiled</dt>
              <dd>{formatTime(d.compiled_at)}</dd>
              <dt className="font-medium text-slate-600 dark:text-slate-400">Commit check</dt>
              <dd>
                {d.check
                  ? `${d.check.name}: ${d.check.conclusion}${d.check.published ? ', published' : `, not published (${d.check.error})`}`
                  : 'not published'}
              </dd>
            </dl>
            <p className="mt-2 text-xs text-slate-600 dark:text-slate-400">
              Verify offline: <code>sluice proof verify {d.slug}.json --keys keys.json</code>
            </p>
          </Card>
          {observations.data?.map((o, i) => (
            <Card
              key={o.slug}
              title={`${d.observation_slugs.length === 2 && i === 0 ? 'Base' : 'Head'} observation ${o.slug} at ${short(o.commit_sha)}`}
              actions={<Badge tone={tone(o.state)}>{o.state}</Badge>}
            >
              {o.error && <ErrorNote error={new Error(`${o.error.code}: ${o.error.message}`)} />}
              <table className={tableClass}>
                <caption className="sr-only">Targets checked</caption>
                <thead>
                  <tr>
                    {['Target', 'Result', 'Files', 'Findings'].map((h) => (
                      <th key={h} scope="col" className={thClass}>
                        {h}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {o.targets.map((t) => (
                    <tr key={`${t.kind}:${t.ref}`}>
                      <td className={`${tdClass} font-mono text-xs`}>
                        {t.kind} {t.ref}
                      </td>
                      <td className={tdClass}>
                        <Badge tone={tone(t.result)}>{t.result}</Badge>
                      </td>
                      <td className={`${tdClass} font-mono text-xs`}>{t.files.join(', ') || '—'}</td>
                      <td className={`${tdClass} text-xs`}>
                        {t.findings.map((f) => `${f.code}: ${f.message}`).join('; ') || '—'}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <h3 className="mt-3 text-sm font-semibold">Input files</h3>
              <ul className="text-xs">
                {o.inputs.map((f) => (
                  <li key={f.path} className="font-mono">
                    {f.path}{' '}
                    <span className="text-slate-600 dark:text-slate-400">
                      sha256 {f.sha256.slice(0, 16)}…
                    </span>
                  </li>
                ))}
              </ul>
            </Card>
          ))}
        </>
      )}
      {!d && !r.error && <Empty>Loading…</Empty>}
    </div>
  );
}
