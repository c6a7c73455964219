import type { Command } from 'commander';
import { apiClient } from '../api';
import { printJson, printLines } from '../io';
import { action, type CommonOptions, call, cols, listAction, type Row, withScope } from '../resource';

const LIST = '/organizations/{organization}/projects/{project}/pipelines';
const ITEM = '/organizations/{organization}/projects/{project}/pipelines/{pipeline}';
const VERSION = '/organizations/{organization}/projects/{project}/pipelines/{pipeline}/versions/{spec_hash}';

/** Every leaf of a JSON value as `path → JSON`, so two specs compare line by line. */
function flatten(value: unknown, at: string, out: Map<string, string>) {
  if (value && typeof value === 'object') {
    const entries = Array.isArray(value)
      ? value.map((v, i) => [String(i), v] as const)
      : Object.entries(value);
    if (entries.length === 0) out.set(at || '.', JSON.stringify(value));
    for (const [k, v] of entries)
      flatten(v, Array.isArray(value) ? `${at}[${k}]` : at ? `${at}.${k}` : k, out);
    return;
  }
  out.set(at || '.', JSON.stringify(value));
}

/** `- path: old` / `+ path: new` for each leaf that differs; empty when the specs are equal. */
export function specDiff(a: unknown, b: unknown): string[] {
  const left = new Map<string, string>();
  const right = new Map<string, string>();
  flatten(a, '', left);
  flatten(b, '', right);
  const keys = [...new Set([...left.keys(), ...right.keys()])];
  const lines: string[] = [];
  for (const k of keys) {
    const l = left.get(k);
    const r = right.get(k);
    if (l === r) continue;
    if (l !== undefined) lines.push(`- ${k}: ${l}`);
    if (r !== undefined) lines.push(`+ ${k}: ${r}`);
  }
  return lines;
}

export function pipelinesReadCommands(pipelines: Command) {
  listAction(pipelines, 'project', {
    description: 'List the pipelines of a project',
    path: LIST,
    key: 'pipelines',
    columns: cols('slug', 'name', 'latest_spec_hash', 'updated_at'),
  });
  action(pipelines, 'project', {
    name: 'get',
    args: ['<pipeline>'],
    description: 'Show a pipeline',
    method: 'GET',
    path: ITEM,
  });
  action(pipelines, 'project', {
    name: 'update',
    args: ['<pipeline>'],
    description: 'Rename or describe a pipeline',
    method: 'PATCH',
    path: ITEM,
    body: ['name', 'description'],
  });
  action(pipelines, 'project', {
    name: 'delete',
    args: ['<pipeline>'],
    description: 'Delete a pipeline',
    method: 'DELETE',
    path: ITEM,
  });
  listAction(pipelines, 'project', {
    name: 'versions',
    args: ['<pipeline>'],
    description: 'List the pushed versions of a pipeline, newest first',
    path: '/organizations/{organization}/projects/{project}/pipelines/{pipeline}/versions',
    key: 'versions',
    columns: cols('spec_hash', 'created_at'),
  });
  action(pipelines, 'project', {
    name: 'version',
    args: ['<pipeline>', '<spec_hash>'],
    description: 'Print the spec of one version (any unique hash prefix)',
    method: 'GET',
    path: VERSION,
    print: (data, opts) => (opts.json ? printJson(data) : printJson(data.spec)),
  });
  listAction(pipelines, 'project', {
    name: 'refs',
    args: ['<pipeline>'],
    description: 'List the data source refs a pipeline uses',
    path: '/organizations/{organization}/projects/{project}/pipelines/{pipeline}/data-source-refs',
    key: 'data_source_refs',
    columns: cols('slug', 'data_source_type', 'required_capabilities'),
  });
  listAction(pipelines, 'env', {
    name: 'deployments',
    description: 'List the deployments of an environment',
    path: '/organizations/{organization}/projects/{project}/environments/{environment}/deployments',
    key: 'deployments',
    columns: cols('pipeline_slug', 'spec_hash', 'active', 'deployed_by', 'created_at'),
    filters: [{ flag: 'pipeline', query: 'pipeline_slug', description: 'only this pipeline' }],
  });
  withScope(
    pipelines
      .command('diff <pipeline> <from_hash> <to_hash>')
      .description('Compare the specs of two versions'),
    'project',
  ).action(async (pipeline: string, from: string, to: string, opts: CommonOptions) => {
    const client = await apiClient(opts);
    const get = async (hash: string) =>
      (
        await call<Row>(client, 'GET', VERSION, {
          path: { organization: opts.org, project: String(opts.project), pipeline, spec_hash: hash },
        })
      ).data;
    const [a, b] = await Promise.all([get(from), get(to)]);
    const lines = specDiff(a.spec, b.spec);
    if (opts.json) return printJson({ from: a.spec_hash, to: b.spec_hash, changes: lines });
    printLines([
      `--- ${a.spec_hash}`,
      `+++ ${b.spec_hash}`,
      ...(lines.length ? lines : ['(no differences)']),
    ]);
  });
}
