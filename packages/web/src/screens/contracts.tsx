import { useMutation, useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { useState } from 'react';
import { PlacePicker } from '../components/place-picker';
import {
  Button,
  Card,
  CursorPager,
  Empty,
  ErrorNote,
  Field,
  Input,
  PageHeader,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';

import { formatTime } from '../lib/format';
import { useProjects } from '../lib/hooks';
import { contractsQuery, createContract } from '../lib/queries/contracts';
import { linkClass, type Search } from './contract-types';

/** Data contracts of a project, and a form for a new one on a pipeline sink. */
export function ContractsList() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const search = useSearch({ from: '/authed/o/$org/contracts' }) as Search;
  const navigate = useNavigate();
  const projects = useProjects(org);
  const project = search.project ?? projects.data?.projects[0]?.slug;
  const list = useQuery(
    contractsQuery({ organization: org, project }, { cursor: search.cursor, direction: search.direction }),
  );
  const set = (patch: Partial<Search>) =>
    navigate({
      to: '/o/$org/contracts',
      params: { org },
      search: { ...search, cursor: undefined, direction: undefined, ...patch },
    });
  const [form, setForm] = useState({ name: '', slug: '', pipeline: '', step: '' });
  const create = useMutation({
    mutationFn: () =>
      createContract(
        { organization: org, project: project ?? '' },
        {
          name: form.name,
          ...(form.slug ? { slug: form.slug } : {}),
          target: { pipeline_slug: form.pipeline, step_slug: form.step },
        },
      ),
    onSuccess: (c) =>
      navigate({
        to: '/o/$org/contracts/$project/$contract',
        params: { org, project: project!, contract: c.slug },
        search: {},
      }),
  });
  const input = (key: keyof typeof form, label: string, hint?: string) => (
    <Field label={label} hint={hint}>
      {({ id, describedBy }) => (
        <Input
          id={id}
          aria-describedby={describedBy}
          value={form[key]}
          onChange={(e) => setForm({ ...form, [key]: e.target.value })}
        />
      )}
    </Field>
  );
  return (
    <div className="space-y-4">
      <PageHeader
        title="Data contracts"
        subtitle="What a sink promises its readers, checked on validation, runs and drift."
      />
      <PlacePicker
        projects={projects.data?.projects ?? []}
        project={project}
        onChange={(p) => set({ project: p.project })}
      />
      <Card>
        <ErrorNote error={list.error} />
        {list.data?.contracts.length === 0 ? (
          <Empty>No contract in this project yet.</Empty>
        ) : (
          <table className={tableClass}>
            <caption className="sr-only">Contracts</caption>
            <thead>
              <tr>
                {['Contract', 'Sink', 'Latest revision', 'Updated'].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {list.data?.contracts.map((c) => (
                <tr key={c.slug} data-contract={c.slug}>
                  <td className={tdClass}>
                    <Link
                      to="/o/$org/contracts/$project/$contract"
                      params={{ org, project: project!, contract: c.slug }}
                      search={{}}
                      className={linkClass}
                    >
                      {c.name}
                    </Link>
                  </td>
                  <td className={`${tdClass} font-mono text-xs`}>
                    {c.target.pipeline_slug} / {c.target.step_slug}
                  </td>
                  <td className={`${tdClass} font-mono text-xs`}>{c.latest_revision_slug ?? 'none yet'}</td>
                  <td className={`${tdClass} text-xs`}>{formatTime(c.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <CursorPager page={list.data} cursor={search.cursor} go={set} />
      </Card>
      <Card title="New contract">
        <form
          className="grid gap-4 sm:grid-cols-4"
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          {input('name', 'Contract name')}
          {input('slug', 'Contract slug (optional)')}
          {input('pipeline', 'Pipeline slug')}
          {input('step', 'Sink step slug')}
          <div className="sm:col-span-4">
            <ErrorNote error={create.error} />
            <Button type="submit" variant="primary" className="mt-2" disabled={create.isPending}>
              Create contract
            </Button>
          </div>
        </form>
      </Card>
    </div>
  );
}
