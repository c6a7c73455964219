import { createHash } from 'node:crypto';
import { canonicalJson } from '@sluice/engine';
import type { Ctx, Scope } from '../../context';
import { AppError, notFound } from '../../http/errors';
import { iso, randomSlug } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { describeFailure, loadConnection, src } from '../data-sources/index';

import { recordEvent } from '../events/index';
import { envelopeDigest, PREDICATE_TYPE, STATEMENT_TYPE, signStatement } from './dsse';
import * as repo from './proof.repo';
import type { TargetResult } from './proof.schemas';
import { signingKey } from './proof-keys';
import { observationDigest, toObservation } from './proof-observations.service';
import { provableSource } from './proof-settings.service';

type Verdict = 'PASSED' | 'WARNED' | 'FAILED';
const refuse = (reason: string) => new AppError('PROOF_NOT_COMPILABLE', reason);
const sha256 = (v: unknown) => createHash('sha256').update(canonicalJson(v)).digest('hex');

function toReceipt(dataSourceSlug: string, candidateSlug: string, r: repo.ReceiptRow) {
  return {
    slug: r.slug,
    data_source_slug: dataSourceSlug,
    candidate_slug: candidateSlug,
    sequence: r.sequence,
    verdict: r.verdict as Verdict,
    observation_slugs: r.observationSlugs,
    digest: r.digest,
    prev_receipt_digest: r.prevReceiptDigest,
    envelope: r.envelope as {
      payloadType: string;
      payload: string;
      signatures: { keyid: string; sig: string }[];
    },
    check: (r.check ?? null) as {
      name: string;
      conclusion: string;
      published: boolean;
      error: string | null;
    } | null,
    compiled_at: iso(r.compiledAt),
  };
}

type FileFields = Map<string, string>;
/** Columns (name → type) of each tabular input file, from an observation's target details. */
const fieldsOf = (o: repo.ObservationRow): Map<string, FileFields> =>
  new Map(
    ((o.inputs ?? []) as { path: string; fields?: { name: string; type: string }[] | null }[]).map((f) => [
      f.path,
      new Map((f.fields ?? []).map((c) => [c.name, c.type])),
    ]),
  );

/** What changed in the files between base and head: removed files and columns are warnings. */
function driftBetween(base: repo.ObservationRow, head: repo.ObservationRow) {
  const before = fieldsOf(base);
  const after = fieldsOf(head);
  const changes: { kind: string; path: string; column: string | null; severity: 'safe' | 'warning' }[] = [];
  for (const [path, cols] of before) {
    const now = after.get(path);
    if (!now) {
      changes.push({ kind: 'file_removed', path, column: null, severity: 'warning' });
      continue;
    }
    for (const [c, t] of cols) {
      if (!now.has(c)) changes.push({ kind: 'column_removed', path, column: c, severity: 'warning' });
      else if (now.get(c) !== t) changes.push({ kind: 'type_changed', path, column: c, severity: 'warning' });
    }
    for (const c of now.keys())
      if (!cols.has(c)) changes.push({ kind: 'column_added', path, column: c, severity: 'safe' });
  }
  for (const path of after.keys())
    if (!before.has(path)) changes.push({ kind: 'file_added', path, column: null, severity: 'safe' });
  const severity = changes.some((c) => c.severity === 'warning')
    ? 'warning'
    : changes.length > 0
      ? 'safe'
      : 'none';
  return { severity, changes };
}

function verdictOf(head: repo.ObservationRow, drift: { severity: string } | null): Verdict {
  if (head.state === 'failed' || head.state === 'error') return 'FAILED';
  if (head.state === 'warned' || drift?.severity === 'warning') return 'WARNED';
  return 'PASSED';
}

export async function compileReceipt(
  ctx: Ctx,
  scope: Scope,
  slug: string,
  body: { candidate_slug: string; observation_slugs: string[] },
) {
  const { row: ds, checks } = await provableSource(ctx, scope, slug);
  const candidate = await repo.findCandidate(ctx.deps.db, ds.id, body.candidate_slug);
  if (!candidate) throw notFound('candidate');
  const observations: repo.ObservationRow[] = [];
  for (const s of body.observation_slugs) {
    const o = await repo.findObservation(ctx.deps.db, ds.id, s);
    if (!o) throw refuse(`observation ${s} is not an observation of data source ${ds.slug}`);
    if (o.state === 'running') throw refuse(`observation ${s} has not finished`);
    observations.push(o);
  }
  const head = observations[observations.length - 1];
  const base = observations.length === 2 ? observations[0] : null;
  if (head.commitSha !== candidate.commitSha || head.repositoryId !== candidate.repositoryId)
    throw refuse(
      `the ${base ? 'second (head) ' : ''}observation must be taken at the candidate commit ${candidate.commitSha}`,
    );
  if (base && base.repositoryId !== head.repositoryId)
    throw refuse('both observations must be of the same repository');
  const drift = base ? driftBetween(base, head) : null;
  const verdict = verdictOf(head, drift);
  const key = await signingKey(ctx.deps);
  const presented = observations.map((o) => toObservation(ds.slug, null, o));

  const receipt = await ctx.deps.db.transaction(async (tx) => {
    const settings = await repo.lockSettings(tx, ds.id);
    if (!settings) throw refuse('proof is not configured for this data source');
    const prev = await repo.lastReceipt(tx, ds.id);
    const compiledAt = new Date();
    const receiptSlug = randomSlug('rcpt');
    const statement = {
      _type: STATEMENT_TYPE,
      subject: [
        { name: `git+${candidate.repositoryId}`, digest: { gitCommit: candidate.commitSha } },
        ...((head.inputs ?? []) as { path: string; sha256: string }[]).map((f) => ({
          name: f.path,
          digest: { sha256: f.sha256 },
        })),
      ],
      predicateType: PREDICATE_TYPE,
      predicate: {
        receipt_slug: receiptSlug,
        organization_slug: scope.org.slug,
        repository_id: candidate.repositoryId,
        data_source_slug: ds.slug,
        candidate: { slug: candidate.slug, commit_sha: candidate.commitSha, ref: candidate.ref },
        observations: observations.map((o, i) => ({
          slug: o.slug,
          role: base && i === 0 ? 'base' : 'head',
          commit_sha: o.commitSha,
          tree_sha: o.treeSha,
          state: o.state,
          digest: o.digest ?? observationDigest(presented[i]),
        })),
        targets: ((head.results ?? []) as TargetResult[]).map((t) => ({
          kind: t.kind,
          ref: t.ref,
          result: t.result,
        })),
        contract_revisions: ((head.results ?? []) as TargetResult[])
          .filter((t) => t.kind === 'contract' && t.contract_revision)
          .map((t) => ({ contract: t.ref, ...t.contract_revision! })),
        drift: drift
          ? { severity: drift.severity, changes: drift.changes, digest: sha256(drift.changes) }
          : null,
        verdict,
        policy_digest: sha256(settings.targets),
        compiled_at: iso(compiledAt),
        prev_receipt_digest: prev?.digest ?? null,
      },
    };
    const envelope = signStatement(statement, key.privateKey, key.keyid);
    const row = await repo.insertReceipt(tx, {
      organizationId: scope.org.id,
      dataSourceId: ds.id,
      slug: receiptSlug,
      candidateId: candidate.id,
      sequence: (prev?.sequence ?? 0) + 1,
      verdict,
      observationSlugs: body.observation_slugs,
      envelope,
      digest: envelopeDigest(envelope),
      prevReceiptDigest: prev?.digest ?? null,
      check: null,
      compiledAt,
    });
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'data_source',
      entitySlug: ds.slug,
      action: 'publish',
      metadata: { proof_receipt_slug: row.slug, verdict, commit_sha: candidate.commitSha },
    });
    return { row, publish: settings.publishChecks };
  });

  let row = receipt.row;
  if (receipt.publish && checks) {
    const check = {
      name: `sluice/proof/${ds.slug}`,
      commit_sha: candidate.commitSha,
      conclusion: verdict === 'PASSED' ? 'success' : verdict === 'WARNED' ? 'neutral' : 'failure',
      title: `Sluice proof: ${verdict}`,
      summary: `Receipt ${row.slug} for ${candidate.commitSha}: ${verdict}.`,
      // The receipt page of the app (packages/web: /o/{org}/data-sources/{ds}/proof-receipts/{slug}).
      details_url: `${ctx.deps.config.publicUrl}/o/${scope.org.slug}/data-sources/${ds.slug}/proof-receipts/${row.slug}`,
    } as const;
    let error: string | null = null;
    try {
      const loaded = await loadConnection(ctx.deps.db, ctx.deps, ds);
      await checks.publish(loaded.connection, loaded.ctx, check);
    } catch (err) {
      const { failure, unexpected } = describeFailure(err);
      if (unexpected)
        ctx.deps.log.error({ err, receipt: row.slug }, 'publishing a proof check failed unexpectedly');
      error = `${failure.code}: ${failure.message}`;
    }
    const published = { name: check.name, conclusion: check.conclusion, published: error === null, error };
    await repo.setReceiptCheck(ctx.deps.db, row.id, published);
    row = { ...row, check: published };
  }
  return toReceipt(ds.slug, candidate.slug, row);
}

export async function listReceipts(ctx: Ctx, scope: Scope, slug: string, query: ListQuery) {
  const { row } = await provableSource(ctx, scope, slug);
  const page = await repo.listReceipts(ctx.deps.db, row.id, query);
  const slugs = await repo.candidateSlugs(
    ctx.deps.db,
    page.items.map((r) => r.candidateId),
  );
  return { ...page, items: page.items.map((r) => toReceipt(row.slug, slugs.get(r.candidateId) ?? '', r)) };
}

export async function getReceipt(ctx: Ctx, scope: Scope, slug: string, receiptSlug: string) {
  const { row } = await provableSource(ctx, scope, slug);
  const r = await repo.findReceipt(ctx.deps.db, row.id, receiptSlug);
  if (!r) throw notFound('receipt');
  const slugs = await repo.candidateSlugs(ctx.deps.db, [r.candidateId]);
  return toReceipt(row.slug, slugs.get(r.candidateId) ?? '', r);
}
