import { useMutation, useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useState } from 'react';
import { Button, Card, ErrorNote, Field, Input, Select } from '../components/ui';

import { useProjectEnvironments } from '../lib/hooks';
import { previewDrift } from '../lib/queries/drift';
import { pipelinesQuery } from '../lib/queries/pipelines';
import { ReportBody, SeverityBadge } from './drift-report';

const CodeEditor = lazy(() => import('../components/code-editor').then((m) => ({ default: m.CodeEditor })));

/** What a candidate schema or draft would do, computed by the server and stored nowhere. */
export function DriftPreviewCard(props: { org: string; project: string }) {
  const { org, project } = props;
  const [pipeline, setPipeline] = useState('');
  const [env, setEnv] = useState('');
  const [ds, setDs] = useState('');
  const [schema, setSchema] = useState('');
  const pipelines = useQuery(pipelinesQuery({ organization: org, project }));
  const envs = useProjectEnvironments(org, project);
  const preview = useMutation({
    mutationFn: () => {
      return previewDrift(
        { organization: org, project, pipeline: pipeline || (pipelines.data?.pipelines[0]?.slug ?? '') },
        {
          environment_slug: env || (envs.data?.environments[0]?.slug ?? ''),
          ...(ds ? { data_source_slug: ds } : {}),
          ...(schema.trim() ? { schema: JSON.parse(schema) } : {}),
        },
      );
    },
  });
  return (
    <Card title="Preview drift of a candidate schema">
      <div className="grid gap-4 sm:grid-cols-3">
        <Field label="Pipeline">
          {({ id }) => (
            <Select id={id} value={pipeline} onChange={(e) => setPipeline(e.target.value)}>
              {pipelines.data?.pipelines.map((p) => (
                <option key={p.slug} value={p.slug}>
                  {p.name}
                </option>
              ))}
            </Select>
          )}
        </Field>
        <Field label="Preview environment">
          {({ id }) => (
            <Select id={id} value={env} onChange={(e) => setEnv(e.target.value)}>
              {envs.data?.environments.map((e) => (
                <option key={e.slug} value={e.slug}>
                  {e.name}
                </option>
              ))}
            </Select>
          )}
        </Field>
        <Field label="Changed data source (optional)" hint="Needed when the pipeline binds several.">
          {({ id, describedBy }) => (
            <Input
              id={id}
              aria-describedby={describedBy}
              value={ds}
              onChange={(e) => setDs(e.target.value)}
            />
          )}
        </Field>
      </div>
      <p className="mt-3 mb-1 text-sm font-medium">
        Candidate schema (JSON, the imported shape; empty: the stored schema)
      </p>
      <Suspense fallback={<div className="h-32" />}>
        <CodeEditor
          value={schema}
          onChange={setSchema}
          language="json"
          label="Candidate schema"
          minHeight="8rem"
        />
      </Suspense>
      <div className="mt-3">
        <Button
          onClick={() => preview.mutate()}
          disabled={preview.isPending || !pipelines.data?.pipelines.length}
        >
          Preview
        </Button>
      </div>
      <div className="mt-3 space-y-3">
        <ErrorNote error={preview.error} />
        {preview.data && (
          <>
            <p className="text-sm" data-testid="drift-preview-summary">
              <SeverityBadge severity={preview.data.severity} /> {preview.data.summary}
            </p>
            <ReportBody report={preview.data} />
          </>
        )}
      </div>
    </Card>
  );
}
