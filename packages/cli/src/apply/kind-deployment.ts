import { CliError, ExitCode } from '../exit';
import { call } from '../resource';
import { orNull, requireSlugs } from './compare';
import { readPipeline, specOf } from './kind-pipeline';
import type { ApplyContext, Doc, Finding, Refusal, ResourceKind } from './types';

type Deployment = { spec_hash: string; active: boolean };
type Validation = { valid: boolean; slug: string; spec_hash: string; findings: Finding[] };

const PE = (ctx: ApplyContext, doc: Doc) => ({
  organization: ctx.org,
  project: String(doc.project),
  environment: String(doc.environment),
});
const VALIDATE =
  '/organizations/{organization}/projects/{project}/environments/{environment}/pipeline-validation' as const;
const pipelineKey = (doc: Doc) => `${doc.project}/${doc.pipeline}`;
const short = (hash: string | null | undefined) => (hash ? hash.slice(0, 12) : 'a new version');
const hasSpec = (doc: Doc) => doc.spec !== undefined || doc.spec_file !== undefined;

/** Findings as lines: severity, code, path, message (the columns of `pipelines validate`). */
export const findingLines = (findings: Finding[]) =>
  findings.map((f) => `  ${f.severity} ${f.code} ${f.path}: ${f.message}`);

/**
 * A finding about a step's data source ref that the files bind in this environment: apply binds
 * it before deploying, and the validation at deploy time judges the binding the files name.
 */
function settledByFiles(f: Finding, spec: Record<string, unknown>, boundRefs: string[]): boolean {
  const at = /^steps\[(\d+)\]\.data_source_ref$/.exec(f.path);
  if (!at) return false;
  const step = (spec.steps as Record<string, unknown>[] | undefined)?.[Number(at[1])];
  return typeof step?.data_source_ref === 'string' && boundRefs.includes(step.data_source_ref);
}

/** The hash this deployment deploys: the files' spec, an explicit spec_hash, else the newest. */
async function targetHash(ctx: ApplyContext, doc: Doc): Promise<string | null> {
  if (typeof doc.spec_hash === 'string') return doc.spec_hash;
  const known = ctx.specHashes?.get(pipelineKey(doc));
  if (known) return known;
  if (hasSpec(doc)) return null; // pushed later in this apply
  return (await readPipeline(ctx, { ...doc, slug: doc.pipeline }))?.latest_spec_hash ?? null;
}

/**
 * `kind: Deployment` with `project`, `environment`, `pipeline`: deploys the spec the files say
 * (a Pipeline document's `deploy: true`), or `spec_hash`, or else the pipeline's newest version.
 * The spec is validated in the environment before anything is written, and its version
 * validated again at deploy time. Deployments are never pruned (delete the pipeline instead).
 */
export const deploymentKind: ResourceKind = {
  kind: 'Deployment',
  order: 60,
  check: (doc) => [
    ...requireSlugs(doc, ['project', 'environment', 'pipeline']),
    ...(doc.spec_hash !== undefined && (typeof doc.spec_hash !== 'string' || hasSpec(doc))
      ? [
          'spec_hash: a version hash (or a unique prefix of 7+ characters), for a deployment without its pipeline document',
        ]
      : []),
  ],
  key: (doc) => `${doc.project}/${doc.environment}/${doc.pipeline}`,
  async precheck(ctx, doc) {
    if (!hasSpec(doc)) return [];
    const spec = specOf(ctx, doc);
    // A project, environment or pipeline this apply creates cannot be validated yet: its first
    // version is validated at deploy time (bindings need the refs a version derives).
    const result = await orNull(
      call<Validation>(ctx.client, 'POST', VALIDATE, {
        path: PE(ctx, doc),
        body: { pipeline_slug: doc.pipeline, spec },
      }),
    );
    if (!result) return [];
    const v = result.data;
    ctx.specHashes?.set(pipelineKey(doc), v.spec_hash);
    const bound = Array.isArray(doc.bound_refs) ? (doc.bound_refs as string[]) : [];
    const errors = v.findings.filter((f) => f.severity === 'error' && !settledByFiles(f, spec, bound));
    if (errors.length === 0) return [];
    const refusal: Refusal = {
      kind: 'Deployment',
      key: deploymentKind.key(doc),
      reason: `spec ${short(v.spec_hash)} is not valid in ${doc.environment} (validation ${v.slug})`,
      findings: v.findings,
    };
    return [refusal];
  },
  async plan(ctx, doc) {
    const to = await targetHash(ctx, doc);
    const moving = (from: string | null) => [`spec_hash ${from ? `${short(from)} ` : ''}→ ${short(to)}`];
    const list = await orNull(
      call<{ deployments: Deployment[] }>(
        ctx.client,
        'GET',
        '/organizations/{organization}/projects/{project}/environments/{environment}/deployments',
        { path: PE(ctx, doc), query: { pipeline_slug: doc.pipeline, limit: 100 } },
      ),
    );
    const active = list?.data.deployments.find((d) => d.active);
    if (!active) return { action: 'create', changes: moving(null) };
    if (to && active.spec_hash.startsWith(to)) return { action: 'unchanged', changes: [] };
    return { action: 'update', changes: moving(active.spec_hash) };
  },
  async apply(ctx, doc) {
    const hash = await targetHash(ctx, doc);
    if (!hash) throw new CliError(ExitCode.failed, `the pipeline ${doc.pipeline} has no version`);
    const { data: v } = await call<Validation>(ctx.client, 'POST', VALIDATE, {
      path: PE(ctx, doc),
      body: { pipeline_slug: doc.pipeline, spec_hash: hash },
    });
    if (!v.valid) {
      throw new CliError(
        ExitCode.failed,
        [
          `spec ${short(v.spec_hash)} is not valid in ${doc.environment} (validation ${v.slug}); not deployed`,
          ...findingLines(v.findings),
        ].join('\n'),
      );
    }
    await call(
      ctx.client,
      'POST',
      '/organizations/{organization}/projects/{project}/environments/{environment}/pipelines/{pipeline}:deploy',
      {
        path: { ...PE(ctx, doc), pipeline: String(doc.pipeline) },
        body: { spec_hash: v.spec_hash, protected_environment_confirmation: doc.environment },
      },
    );
  },
};
