import { zodResolver } from '@hookform/resolvers/zod';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useForm } from 'react-hook-form';
import {
  type Destination,
  LIFECYCLE_STATES,
  NOTIFICATION_TYPES,
  POLICY_SCOPES,
  type Policy,
  SEVERITIES,
  type SourceMetadata,
} from '../lib/alerts';
import { useProjectEnvironments, useProjects } from '../lib/hooks';
import {
  policyBody,
  policySchema,
  policyValues,
  SCOPE_LABELS,
  type PolicyValues as Values,
} from '../lib/policy-values';
import {
  alertKeys,
  allDestinationsQuery,
  createPolicy,
  type PolicyBody,
  sourceMetadataQuery,
  updatePolicy,
} from '../lib/queries/alerts';
import type { Project } from '../lib/types';
import { Button, Card, ErrorNote, Field, InputField, Select } from './ui';

type Props = { org: string; existing?: Policy; onSaved: () => void };

/**
 * Create or edit an alert policy: what it matches (scope and filters) and where it sends. The
 * form mounts once its pickers' choices are loaded, so every select shows the saved value.
 */
export function PolicyForm(props: Props) {
  const projects = useProjects(props.org);
  const destinations = useQuery(allDestinationsQuery(props.org));
  const meta = useQuery(sourceMetadataQuery(props.org));
  const error = projects.error ?? destinations.error ?? meta.error;
  if (error) return <ErrorNote error={error} />;
  if (!projects.data || !destinations.data || !meta.data)
    return <p className="text-sm text-slate-600 dark:text-slate-400">Loading the form…</p>;
  return (
    <PolicyFormBody
      {...props}
      projects={projects.data.projects}
      destinations={destinations.data}
      meta={meta.data}
    />
  );
}

function PolicyFormBody(
  props: Props & { projects: Project[]; destinations: Destination[]; meta: SourceMetadata },
) {
  const { org, existing: p, projects, destinations, meta } = props;
  const qc = useQueryClient();
  const form = useForm<Values>({
    resolver: zodResolver(policySchema),
    defaultValues: policyValues(p),
  });
  const scope = form.watch('scope');
  const project = form.watch('project_slug');
  const kind = form.watch('source_kind');
  const envs = useProjectEnvironments(
    org,
    scope === 'project_environment' ? project || undefined : undefined,
  );
  const actions = [
    ...new Set(meta.sources.filter((s) => !kind || s.source_kind === kind).flatMap((s) => s.source_actions)),
  ].sort();
  // A new source kind has its own actions: the chosen action no longer applies.
  const kindField = form.register('source_kind', {
    onChange: () => form.setValue('source_action', ''),
  });
  const save = useMutation({
    mutationFn: (v: Values) => {
      const body = policyBody(v) as PolicyBody;
      return p
        ? updatePolicy(org, p.slug, body)
        : createPolicy(org, { ...body, ...(v.slug ? { slug: v.slug } : {}) });
    },
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: alertKeys.policies(org) });
      props.onSaved();
    },
  });
  const err = form.formState.errors;
  const picker = (
    name:
      | 'notification_type'
      | 'severity'
      | 'lifecycle_state'
      | 'source_kind'
      | 'source_action'
      | 'source_ref',
    label: string,
    options: { value: string; label: string }[],
    hint?: string,
  ) => (
    <Field label={label} hint={hint}>
      {({ id, describedBy }) => (
        <Select
          id={id}
          aria-describedby={describedBy}
          {...(name === 'source_kind' ? kindField : form.register(name))}
        >
          <option value="">Any</option>
          {current(name, options)}
          {options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </Select>
      )}
    </Field>
  );
  const current = (name: keyof Values, options: { value: string }[]) => {
    const v = form.getValues(name);
    return typeof v === 'string' && v !== '' && !options.some((o) => o.value === v) ? (
      <option value={v}>{v}</option>
    ) : null;
  };
  const plain = (list: readonly string[]) => list.map((v) => ({ value: v, label: v }));
  return (
    <Card title={p ? 'Edit policy' : 'Alert policy'}>
      <form noValidate onSubmit={form.handleSubmit((v) => save.mutate(v))} className="space-y-5">
        <div className="grid gap-4 sm:grid-cols-2">
          <InputField label="Name" error={err.name?.message} input={form.register('name')} />
          {!p && (
            <InputField
              label="Slug (optional)"
              hint="Made from the name when empty."
              error={err.slug?.message}
              input={form.register('slug')}
            />
          )}
        </div>
        <fieldset className="grid gap-4 sm:grid-cols-3">
          <legend className="mb-2 text-sm font-semibold">Scope</legend>
          <Field label="Applies to">
            {({ id }) => (
              <Select id={id} {...form.register('scope')}>
                {POLICY_SCOPES.map((s) => (
                  <option key={s} value={s}>
                    {SCOPE_LABELS[s]}
                  </option>
                ))}
              </Select>
            )}
          </Field>
          {scope !== 'organization' && (
            <Field label="Project" error={err.project_slug?.message}>
              {({ id, describedBy, invalid }) => (
                <Select
                  id={id}
                  aria-describedby={describedBy}
                  aria-invalid={invalid}
                  {...form.register('project_slug')}
                >
                  <option value="">Choose a project</option>
                  {projects.map((pr) => (
                    <option key={pr.slug} value={pr.slug}>
                      {pr.name} ({pr.slug})
                    </option>
                  ))}
                </Select>
              )}
            </Field>
          )}
          {scope === 'project_environment' && (!project || envs.data) && (
            <Field label="Environment" error={err.environment_slug?.message}>
              {({ id, describedBy, invalid }) => (
                <Select
                  id={id}
                  aria-describedby={describedBy}
                  aria-invalid={invalid}
                  {...form.register('environment_slug')}
                >
                  <option value="">{project ? 'Choose an environment' : 'Choose a project first'}</option>
                  {envs.data?.environments.map((en) => (
                    <option key={en.slug} value={en.slug}>
                      {en.name} ({en.slug})
                    </option>
                  ))}
                </Select>
              )}
            </Field>
          )}
        </fieldset>
        <fieldset className="grid gap-4 sm:grid-cols-3">
          <legend className="mb-2 text-sm font-semibold">
            Matches (every filter that is not “Any” must match)
          </legend>
          {picker('notification_type', 'Notification type', plain(NOTIFICATION_TYPES))}
          {picker('severity', 'Severity', plain(SEVERITIES), 'Exact severity, not “at least”.')}
          {picker('lifecycle_state', 'Lifecycle state', plain(LIFECYCLE_STATES))}
          {picker('source_kind', 'Source kind', plain(meta.sources.map((s) => s.source_kind)))}
          {picker('source_action', 'Source action', plain(actions))}
          {picker(
            'source_ref',
            'Involving',
            meta.source_refs.map((r) => ({ value: r.value, label: `${r.label} (${r.value})` })),
          )}
        </fieldset>
        <fieldset aria-describedby={err.destination_slugs ? 'policy-dest-err' : undefined}>
          <legend className="mb-2 text-sm font-semibold">Send to</legend>
          {destinations.length === 0 && (
            <p className="text-sm">
              No destination yet:{' '}
              <Link
                to="/o/$org/alerts/destinations/new"
                params={{ org }}
                className="text-blue-700 hover:underline dark:text-blue-300"
              >
                create one first
              </Link>
              .
            </p>
          )}
          <div className="grid gap-1 sm:grid-cols-2">
            {destinations.map((d) => (
              <label key={d.slug} className="flex items-center gap-2 text-sm">
                <input type="checkbox" value={d.slug} {...form.register('destination_slugs')} />
                {d.name}{' '}
                <span className="text-xs text-slate-600 dark:text-slate-400">
                  {d.non_secret_config.recipients.join(', ')}
                  {d.enabled ? '' : ' (disabled)'}
                </span>
              </label>
            ))}
          </div>
          {err.destination_slugs && (
            <p id="policy-dest-err" className="mt-1 text-xs text-red-700 dark:text-red-400">
              {err.destination_slugs.message}
            </p>
          )}
        </fieldset>
        <label className="flex items-center gap-2 text-sm">
          <input type="checkbox" {...form.register('enabled')} /> Enabled (a disabled policy sends nothing)
        </label>
        <ErrorNote error={save.error ?? envs.error} />
        <Button type="submit" variant="primary" disabled={save.isPending}>
          {p ? 'Save policy' : 'Create policy'}
        </Button>
      </form>
    </Card>
  );
}
