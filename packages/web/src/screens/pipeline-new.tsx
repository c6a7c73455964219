import { zodResolver } from '@hookform/resolvers/zod';
import { useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { lazy, Suspense, useState } from 'react';
import { useForm } from 'react-hook-form';
import { z } from 'zod';
import { Button, Card, ErrorNote, Field, InputField, PageHeader, Select } from '../components/ui';

import { clearDraft, readDraft, useDraftSaver } from '../lib/draft';
import { useProjects } from '../lib/hooks';
import { createPipeline, pushVersion } from '../lib/queries/pipelines';

const CodeEditor = lazy(() => import('../components/code-editor').then((m) => ({ default: m.CodeEditor })));

export const starterSpec = JSON.stringify(
  {
    steps: [
      {
        slug: 'extract',
        kind: 'source',
        data_source_ref: 'warehouse',
        operation: {
          operation_type: 'sql',
          sql: "select g as id, 'row ' || g as name from generate_series(1, 100) g",
        },
      },
      {
        slug: 'shape',
        kind: 'transform',
        operation: { operation_type: 'sql', sql: 'select id, upper(name) as name from extract' },
      },
      {
        slug: 'load',
        kind: 'sink',
        data_source_ref: 'warehouse',
        operation: {
          operation_type: 'sql',
          write: { table: 'sluice_demo', mode: 'replace', create_table: true },
        },
      },
    ],
    edges: [
      { from: 'extract', to: 'shape' },
      { from: 'shape', to: 'load' },
    ],
  },
  null,
  2,
);

const DRAFT = 'pipeline-new';
type Draft = { name?: string; slug?: string; project?: string; spec?: string };

const schema = z.object({
  name: z.string().min(1, 'Give the pipeline a name').max(100),
  slug: z
    .string()
    .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'Lowercase letters, digits and hyphens')
    .or(z.literal('')),
  project: z.string().min(1, 'Choose a project'),
});

export function PipelineNew() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const search = useSearch({ from: '/authed/o/$org/pipelines/new' });
  const navigate = useNavigate();
  const projects = useProjects(org);
  // A draft of this form (name, slug, project, spec) survives a reload until the pipeline exists.
  const [draft] = useState(() => readDraft<Draft>(org, DRAFT));
  const [spec, setSpec] = useState(draft?.spec ?? starterSpec);
  const [error, setError] = useState<unknown>(null);
  const form = useForm<z.infer<typeof schema>>({
    resolver: zodResolver(schema),
    values: {
      name: draft?.name ?? '',
      slug: draft?.slug ?? '',
      project: search.project ?? draft?.project ?? projects.data?.projects[0]?.slug ?? '',
    },
    resetOptions: { keepDirtyValues: true },
  });
  const watched = form.watch();
  const [saving, setSaving] = useState(true);
  useDraftSaver(org, DRAFT, { ...watched, spec }, saving && (form.formState.isDirty || spec !== starterSpec));
  const onSubmit = form.handleSubmit(async (v) => {
    setError(null);
    let parsed: unknown;
    try {
      parsed = JSON.parse(spec);
    } catch {
      setError(new Error('The spec is not valid JSON'));
      return;
    }
    try {
      const at = { organization: org, project: v.project };
      const p = await createPipeline(at, { name: v.name, ...(v.slug ? { slug: v.slug } : {}) });
      await pushVersion({ ...at, pipeline: p.slug }, parsed);
      setSaving(false);
      clearDraft(org, DRAFT);
      await navigate({
        to: '/o/$org/pipelines/$project/$pipeline',
        params: { org, project: v.project, pipeline: p.slug },
        search: { tab: 'deploy' },
      });
    } catch (e) {
      setError(e);
    }
  });
  const errors = form.formState.errors;
  return (
    <div className="max-w-4xl">
      <PageHeader
        title="New pipeline"
        subtitle="Name it, write its spec, then validate and deploy it per environment."
      />
      {draft && (
        <p
          role="status"
          data-testid="draft-restored"
          className="mb-3 text-sm text-slate-700 dark:text-slate-300"
        >
          Your unsaved draft was restored.{' '}
          <button
            type="button"
            className="text-blue-700 underline dark:text-blue-300"
            onClick={() => {
              clearDraft(org, DRAFT);
              window.location.reload();
            }}
          >
            Discard draft
          </button>
        </p>
      )}
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        <Card>
          <div className="grid gap-4 sm:grid-cols-3">
            <Field label="Project" error={errors.project?.message}>
              {({ id, describedBy }) => (
                <Select id={id} aria-describedby={describedBy} {...form.register('project')}>
                  {projects.data?.projects.map((p) => (
                    <option key={p.slug} value={p.slug}>
                      {p.name}
                    </option>
                  ))}
                </Select>
              )}
            </Field>
            <InputField label="Name" error={errors.name?.message} input={form.register('name')} />
            <InputField
              label="Slug (optional)"
              hint="Generated from the name when empty."
              error={errors.slug?.message}
              input={form.register('slug')}
            />
          </div>
        </Card>
        <Card title="Spec (JSON)">
          <Suspense fallback={<div className="h-64" />}>
            <CodeEditor
              value={spec}
              onChange={setSpec}
              language="json"
              label="Pipeline spec"
              minHeight="18rem"
            />
          </Suspense>
        </Card>
        <ErrorNote error={error} />
        <Button type="submit" variant="primary" disabled={form.formState.isSubmitting}>
          Create pipeline
        </Button>
      </form>
    </div>
  );
}
