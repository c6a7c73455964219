import fs from 'node:fs';
import path from 'node:path';
import { parseDocuments } from '../document';
import { CliError, ExitCode } from '../exit';
import { call } from '../resource';
import { changedFields, orNull, pick, requireSlugs } from './compare';
import type { ApplyContext, Doc, ResourceKind } from './types';

type Pipeline = { latest_spec_hash: string | null } & Record<string, unknown>;
const item = (org: string, doc: Doc) => ({
  organization: org,
  project: String(doc.project),
  pipeline: String(doc.slug),
});

/** `spec` inline, or `spec_file` (JSON or YAML) relative to the apply file. */
export function specOf(ctx: ApplyContext, doc: Doc): Record<string, unknown> {
  if (doc.spec && typeof doc.spec === 'object') return doc.spec as Record<string, unknown>;
  const file = path.resolve(ctx.dir, String(doc.spec_file));
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new CliError(ExitCode.failed, `Pipeline ${doc.slug}: cannot read spec_file ${file}`);
  }
  const [spec] = parseDocuments(text, file);
  return spec as Record<string, unknown>;
}

export async function readPipeline(ctx: ApplyContext, doc: Doc) {
  const have = await orNull(
    call<Pipeline>(
      ctx.client,
      'GET',
      '/organizations/{organization}/projects/{project}/pipelines/{pipeline}',
      {
        path: item(ctx.org, doc),
      },
    ),
  );
  return have?.data ?? null;
}

/**
 * `kind: Pipeline` with `project`, `slug`, `name`, `description`, `spec` or `spec_file`, and
 * `environments: {ENV: {bindings: {REF: DATA_SOURCE}, deploy: true}}`, which stand for Binding
 * and Deployment documents. A changed spec is pushed as a new version.
 */
export const pipelineKind: ResourceKind = {
  kind: 'Pipeline',
  order: 40,
  check: (doc) => [
    ...requireSlugs(doc, ['project', 'slug']),
    ...(doc.spec || doc.spec_file ? [] : ['spec or spec_file: required']),
  ],
  key: (doc) => `${doc.project}/${doc.slug}`,
  expand(doc) {
    const envs = (doc.environments ?? {}) as Record<
      string,
      { bindings?: Record<string, string>; deploy?: boolean }
    >;
    return Object.entries(envs).flatMap(([environment, e]) => [
      ...Object.entries(e?.bindings ?? {}).map(([ref, dataSource]) => ({
        kind: 'Binding',
        project: doc.project,
        environment,
        pipeline: doc.slug,
        ref,
        data_source: dataSource,
      })),
      // The deployment carries the spec it deploys and the refs the files bind in its
      // environment (its check before any write leaves findings about those to the deploy).
      ...(e?.deploy
        ? [
            {
              kind: 'Deployment',
              project: doc.project,
              environment,
              pipeline: doc.slug,
              ...pick(doc, ['spec', 'spec_file']),
              bound_refs: Object.keys(e?.bindings ?? {}),
            },
          ]
        : []),
    ]);
  },
  async plan(ctx, doc) {
    const have = await readPipeline(ctx, doc);
    if (!have) return { action: 'create', changes: [] };
    const changes = changedFields(pick(doc, ['name', 'description']), have);
    const spec = specOf(ctx, doc);
    // The files' hash is known when a deployment validated them before any write: an existing
    // version (an older commit's files, a rollback) is deployed as it is, not pushed again.
    const hash = ctx.specHashes?.get(`${doc.project}/${doc.slug}`);
    if (hash) {
      const exists =
        hash === have.latest_spec_hash ||
        (await orNull(
          call(
            ctx.client,
            'GET',
            '/organizations/{organization}/projects/{project}/pipelines/{pipeline}/versions/{spec_hash}',
            { path: { ...item(ctx.org, doc), spec_hash: hash } },
          ),
        )) !== null;
      if (!exists) changes.push('spec');
      return { action: changes.length ? 'update' : 'unchanged', changes };
    }
    const latest = have.latest_spec_hash
      ? await call<{ spec: unknown }>(
          ctx.client,
          'GET',
          '/organizations/{organization}/projects/{project}/pipelines/{pipeline}/versions/{spec_hash}',
          { path: { ...item(ctx.org, doc), spec_hash: have.latest_spec_hash } },
        )
      : null;
    // The stored spec carries every default, so only what the file says is compared.
    if (!latest || changedFields(spec, latest.data.spec).length > 0) changes.push('spec');
    return { action: changes.length ? 'update' : 'unchanged', changes };
  },
  async apply(ctx, doc, change) {
    const path = item(ctx.org, doc);
    if (change.action === 'create') {
      await call(ctx.client, 'POST', '/organizations/{organization}/projects/{project}/pipelines', {
        path: { organization: ctx.org, project: path.project },
        body: { name: doc.name ?? doc.slug, slug: doc.slug, ...pick(doc, ['description']) },
      });
    } else if (change.changes.some((c) => c !== 'spec')) {
      await call(
        ctx.client,
        'PATCH',
        '/organizations/{organization}/projects/{project}/pipelines/{pipeline}',
        {
          path,
          body: pick(doc, ['name', 'description']),
        },
      );
    }
    if (change.action === 'create' || change.changes.includes('spec')) {
      // Idempotent: a spec pushed before returns its existing version.
      const { data } = await call<{ spec_hash: string }>(
        ctx.client,
        'POST',
        '/organizations/{organization}/projects/{project}/pipelines/{pipeline}/versions',
        {
          path,
          body: { spec: specOf(ctx, doc) },
        },
      );
      ctx.specHashes?.set(`${doc.project}/${doc.slug}`, data.spec_hash);
    }
  },
  async remove(ctx, key) {
    const [project, pipeline] = key.split('/');
    await call(
      ctx.client,
      'DELETE',
      '/organizations/{organization}/projects/{project}/pipelines/{pipeline}',
      {
        path: { organization: ctx.org, project, pipeline },
      },
    );
  },
};
