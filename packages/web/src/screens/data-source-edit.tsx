import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { lazy, Suspense, useState } from 'react';
import { useForm } from 'react-hook-form';
import { type FormValues, initialValues, SchemaFields, toPayload } from '../components/schema-form';
import { Badge, Button, Card, ErrorNote, Field, Input, PageHeader, Select } from '../components/ui';
import type { BodyOf } from '../lib/api';
import { ApiError } from '../lib/api';
import { clearDraft, readDraft, useDraftSaver } from '../lib/draft';
import { formatTime } from '../lib/format';
import {
  connectorsQuery,
  createDataSource,
  dataSourceQuery,
  importSchema,
  testDataSource,
  updateDataSource,
} from '../lib/queries/data-sources';
import type { Connector, DataSource, TestResult } from '../lib/types';
import { SchemaBrowser } from './schema-browser';

const DataSourceDriftPanel = lazy(() => import('./drift').then((m) => ({ default: m.DataSourceDriftPanel })));
const ProofPanel = lazy(() => import('./proof').then((m) => ({ default: m.ProofPanel })));
const PROOF_TYPES = ['git', 'github', 'gitlab'];
const TAB_LABELS: Record<string, string> = {
  schema: 'Schema',
  settings: 'Connection settings',
  drift: 'Drift reports',
  proof: 'Proof',
};

const useConnectors = () => useQuery(connectorsQuery());

/** Per-field messages of a 400, keyed by their path (config.port…). */
const fieldErrors = (e: unknown): Record<string, string> =>
  e instanceof ApiError
    ? Object.fromEntries(e.validationErrors.map((v) => [v.path.replace(/^body\./, ''), v.message]))
    : {};

function ConnectionForm(props: {
  org: string;
  connector: Connector;
  existing?: DataSource;
  onSaved: (ds: DataSource) => void;
}) {
  const { org, connector, existing } = props;
  const [slug, setSlug] = useState(existing?.slug ?? null);
  const [error, setError] = useState<unknown>(null);
  const [test, setTest] = useState<TestResult | null>(null);
  const [busy, setBusy] = useState(false);
  // A new data source keeps a draft of its name and config (never its credentials) per org and
  // connector until it is created, so a reload loses nothing.
  const draftKey = `data-source-new.${connector.type}`;
  const [draft] = useState(() =>
    existing ? null : readDraft<{ name?: string; config?: Record<string, unknown> }>(org, draftKey),
  );
  const [name, setName] = useState(existing?.name ?? draft?.name ?? '');
  // The form keeps every input across saves and failed tests; credentials are never read back.
  const form = useForm<FormValues>({
    defaultValues: {
      config: { ...initialValues(connector.config_schema, existing?.config), ...(draft?.config ?? {}) },
      credentials: initialValues(connector.credentials_schema),
    },
  });
  const config = form.watch('config');
  useDraftSaver(
    org,
    draftKey,
    { name, config },
    !existing && !slug && (form.formState.isDirty || name !== ''),
  );
  const save = async (v: FormValues) => {
    const config = toPayload(connector.config_schema, v.config);
    const credentials = toPayload(connector.credentials_schema, v.credentials);
    const hasCredentials = Object.values(v.credentials ?? {}).some((x) => x !== '' && x !== undefined);
    if (!slug) {
      const ds = await createDataSource(org, {
        type: connector.type,
        name,
        config,
        ...(connector.credentials_schema && (hasCredentials || connector.credentials_required)
          ? { credentials }
          : {}),
      } as BodyOf<'createDataSources'>);
      setSlug(ds.slug);
      clearDraft(org, draftKey);
      return ds;
    }
    // Credentials go in the same PATCH: a change of host or port (where they are sent) is
    // refused unless the request carries them again, so a separate PUT afterwards cannot work.
    return updateDataSource(org, slug, {
      name,
      config,
      ...(hasCredentials ? { credentials } : {}),
    });
  };
  const run = (withTest: boolean) =>
    form.handleSubmit(async (v) => {
      setError(null);
      setTest(null);
      setBusy(true);
      try {
        const ds = await save(v);
        if (withTest) {
          const r = await testDataSource(org, ds.slug);
          setTest(r);
          if (r.ok) props.onSaved(ds);
        } else props.onSaved(ds);
      } catch (e) {
        setError(e);
      } finally {
        setBusy(false);
      }
    });
  const errs = fieldErrors(error);
  return (
    <form onSubmit={run(true)} className="space-y-4" noValidate>
      {draft && !slug && (
        <p role="status" data-testid="draft-restored" className="text-sm text-slate-700 dark:text-slate-300">
          Your unsaved draft was restored (credentials are never kept in drafts).
        </p>
      )}
      <Card title={`${connector.label} connection`}>
        <div className="mb-4 max-w-md">
          <Field label="Name" error={errs.name}>
            {({ id, describedBy }) => (
              <Input
                id={id}
                aria-describedby={describedBy}
                value={name}
                onChange={(e) => setName(e.target.value)}
              />
            )}
          </Field>
        </div>
        <SchemaFields
          schema={connector.config_schema}
          prefix="config"
          register={form.register}
          errors={errs}
        />
      </Card>
      {connector.credentials_schema && (
        <Card title="Credentials (write-only: stored encrypted, never shown again)">
          <SchemaFields
            schema={connector.credentials_schema}
            prefix="credentials"
            register={form.register}
            errors={errs}
            writeOnly
            storedSecret={Boolean(existing?.credential)}
          />
        </Card>
      )}
      <ErrorNote error={error} />
      {test && (
        <div
          role="status"
          data-testid="test-result"
          className={`rounded-md border px-3 py-2 text-sm ${test.ok ? 'border-emerald-300 bg-emerald-50 dark:border-emerald-800 dark:bg-emerald-950' : 'border-red-300 bg-red-50 dark:border-red-800 dark:bg-red-950'}`}
        >
          {test.ok
            ? 'Connection works.'
            : `Connection failed — ${test.error?.code}: ${test.error?.message}. Your inputs are kept; fix them and test again.`}
        </div>
      )}
      <div className="flex gap-2">
        <Button type="submit" variant="primary" disabled={busy}>
          {busy ? 'Testing…' : 'Save and test connection'}
        </Button>
        <Button onClick={run(false)} disabled={busy}>
          Save without testing
        </Button>
      </div>
    </form>
  );
}

export function DataSourceNew() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const search = useSearch({ from: '/authed/o/$org/data-sources/new' });
  const navigate = useNavigate({ from: '/o/$org/data-sources/new' });
  const connectors = useConnectors();
  const connector = connectors.data?.connectors.find((c) => c.type === search.type);
  return (
    <div className="max-w-4xl">
      <PageHeader title="New data source" subtitle="The form follows the connector's own schema." />
      <div className="mb-4 max-w-sm">
        <Field label="Connector">
          {({ id }) => (
            <Select
              id={id}
              value={search.type ?? ''}
              onChange={(e) => navigate({ search: { type: e.target.value || undefined } })}
            >
              <option value="">Choose a connector…</option>
              {connectors.data?.connectors.map((c) => (
                <option key={c.type} value={c.type}>
                  {c.label}
                </option>
              ))}
            </Select>
          )}
        </Field>
      </div>
      <ErrorNote error={connectors.error} />
      {connector && (
        <ConnectionForm
          key={connector.type}
          org={org}
          connector={connector}
          onSaved={(ds) =>
            navigate({ to: '/o/$org/data-sources/$ds', params: { org, ds: ds.slug }, search: {} })
          }
        />
      )}
    </div>
  );
}

export function DataSourceDetail() {
  const { org, ds: slug } = useParams({ from: '/authed/o/$org/data-sources/$ds' });
  const search = useSearch({ from: '/authed/o/$org/data-sources/$ds' });
  const navigate = useNavigate({ from: '/o/$org/data-sources/$ds' });
  const qc = useQueryClient();
  const one = dataSourceQuery(org, slug);
  const key = one.queryKey;
  const ds = useQuery({
    ...one,
    refetchInterval: (q) => (q.state.data?.schema_status === 'importing' ? 1000 : false),
  });
  const connectors = useConnectors();
  const connector = connectors.data?.connectors.find((c) => c.type === ds.data?.type);
  const [importError, setImportError] = useState<unknown>(null);
  const tab = search.tab ?? 'schema';
  const d = ds.data;
  return (
    <div className="space-y-4">
      <PageHeader
        title={d?.name ?? slug}
        subtitle={
          d && (
            <>
              {d.type} · <code>{d.slug}</code> · last tested {formatTime(d.last_tested_at)}{' '}
              {d.last_tested_at &&
                (d.test_error ? <Badge tone="red">failing</Badge> : <Badge tone="green">ok</Badge>)}
            </>
          )
        }
        actions={
          <Link
            to="/o/$org/data-sources"
            params={{ org }}
            search={{}}
            className="rounded-md px-3 py-1.5 text-sm hover:bg-slate-200 dark:hover:bg-slate-800"
          >
            All data sources
          </Link>
        }
      />
      <ErrorNote error={ds.error} />
      <div
        role="tablist"
        aria-label="Data source sections"
        className="flex gap-1 border-b border-slate-200 dark:border-slate-800"
      >
        {['schema', 'settings', 'drift', ...(d && PROOF_TYPES.includes(d.type) ? ['proof'] : [])].map((t) => (
          <button
            key={t}
            type="button"
            role="tab"
            aria-selected={tab === t}
            onClick={() =>
              navigate({
                search: (s: Record<string, string | undefined>) => ({ ...s, tab: t }),
                replace: true,
              })
            }
            className={`-mb-px border-b-2 px-3 py-2 text-sm ${tab === t ? 'border-blue-600 font-semibold dark:border-blue-400' : 'border-transparent'}`}
          >
            {TAB_LABELS[t]}
          </button>
        ))}
      </div>
      {tab === 'drift' && (
        <Suspense fallback={<div className="h-32" />}>
          <DataSourceDriftPanel org={org} ds={slug} />
        </Suspense>
      )}
      {tab === 'proof' && d && PROOF_TYPES.includes(d.type) && (
        <Suspense fallback={<div className="h-32" />}>
          <ProofPanel org={org} ds={slug} />
        </Suspense>
      )}
      {tab === 'settings' && d && connector && (
        <ConnectionForm
          org={org}
          connector={connector}
          existing={d}
          onSaved={() => void qc.invalidateQueries({ queryKey: key })}
        />
      )}
      {tab === 'schema' && d && (
        <Card
          title={`Schema (${d.schema_status})`}
          actions={
            <Button
              onClick={async () => {
                setImportError(null);
                try {
                  await importSchema(org, slug);
                  await qc.invalidateQueries({ queryKey: key });
                } catch (e) {
                  setImportError(e);
                }
              }}
              disabled={d.schema_status === 'importing'}
            >
              {d.schema_status === 'importing' ? 'Importing…' : 'Import schema'}
            </Button>
          }
        >
          <ErrorNote error={importError} />
          <SchemaBrowser
            schema={d.schema}
            q={search.q}
            onSearch={(q) =>
              navigate({ search: (s: Record<string, string | undefined>) => ({ ...s, q }), replace: true })
            }
          />
        </Card>
      )}
    </div>
  );
}
