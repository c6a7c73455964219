import { CliError, ExitCode } from '../exit';
import { call } from '../resource';
import { orNull, requireSlugs } from './compare';
import { readPipeline } from './kind-pipeline';
import type { ApplyContext, Doc, ResourceKind } from './types';

type Deployment = { spec_hash: string; active: boolean };
type Validation = {
  valid: boolean;
  slug: string;
  findings: { code: string; message: string; severity: string }[];
};

const PE = (ctx: ApplyContext, doc: Doc) => ({
  organization: ctx.org,
  project: String(doc.project),
  environment: String(doc.environment),
});

/**
 * `kind: Deployment` with `project`, `environment`, `pipeline`: the pipeline's newest version is
 * validated and deployed there. Deployments are never pruned (delete the pipeline instead).
 */
export const deploymentKind: ResourceKind = {
  kind: 'Deployment',
  order: 60,
  check: (doc) => requireSlugs(doc, ['project', 'environment', 'pipeline']),
  key: (doc) => `${doc.project}/${doc.environment}/${doc.pipeline}`,
  async plan(ctx, doc) {
    const pipeline = await readPipeline(ctx, { ...doc, slug: doc.pipeline });
    // A pipeline this apply creates or changes gets a new version to deploy.
    const upstream = ctx.planned?.get(`Pipeline:${doc.project}/${doc.pipeline}`);
    if (!pipeline?.latest_spec_hash) return { action: 'create', changes: [] };
    const list = await orNull(
      call<{ deployments: Deployment[] }>(
        ctx.client,
        'GET',
        '/organizations/{organization}/projects/{project}/environments/{environment}/deployments',
        { path: PE(ctx, doc), query: { pipeline_slug: doc.pipeline, limit: 100 } },
      ),
    );
    const active = list?.data.deployments.find((d) => d.active);
    if (!active) return { action: 'create', changes: [] };
    const stale = active.spec_hash !== pipeline.latest_spec_hash || upstream?.changes.includes('spec');
    return stale ? { action: 'update', changes: ['spec_hash'] } : { action: 'unchanged', changes: [] };
  },
  async apply(ctx, doc) {
    const pipeline = await readPipeline(ctx, { ...doc, slug: doc.pipeline });
    const hash = pipeline?.latest_spec_hash;
    if (!hash) throw new CliError(ExitCode.failed, `Deployment ${doc.pipeline}: the pipeline has no version`);
    const { data: v } = await call<Validation>(
      ctx.client,
      'POST',
      '/organizations/{organization}/projects/{project}/environments/{environment}/pipeline-validation',
      { path: PE(ctx, doc), body: { pipeline_slug: doc.pipeline, spec_hash: hash } },
    );
    if (!v.valid) {
      const errors = v.findings.filter((f) => f.severity === 'error').map((f) => `  ${f.code}: ${f.message}`);
      throw new CliError(
        ExitCode.failed,
        [`Deployment ${doc.pipeline} in ${doc.environment}: validation ${v.slug} failed`, ...errors].join(
          '\n',
        ),
      );
    }
    await call(
      ctx.client,
      'POST',
      '/organizations/{organization}/projects/{project}/environments/{environment}/pipelines/{pipeline}:deploy',
      {
        path: { ...PE(ctx, doc), pipeline: String(doc.pipeline) },
        body: { spec_hash: hash, protected_environment_confirmation: doc.environment },
      },
    );
  },
};
