import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CliError, ExitCode } from '../exit';
import { configDir } from '../profile';
import { orNull } from './compare';
import { resourceKinds } from './kinds';
import { type Loaded, loadDocuments } from './load';
import type { ApplyContext, Change, Doc, Refusal, ResourceKind } from './types';

/** The files were refused before anything was written; `refusals` says why (with findings). */
export class ApplyRefused extends CliError {
  constructor(readonly refusals: Refusal[]) {
    super(
      ExitCode.failed,
      `refused, nothing was changed: ${refusals.map((r) => `${r.kind} ${r.key}: ${r.reason}`).join('; ')}`,
    );
  }
}

export type PlanLine = { action: Change['action'] | 'delete'; kind: string; key: string; changes: string[] };
type Ref = { kind: string; key: string };
type State = { base_url: string; organization: string; resources: Ref[] };

const kindOf = (name: string): ResourceKind | undefined => resourceKinds.find((k) => k.kind === name);

/** Documents, expanded (a pipeline's bindings and deployments), checked and sorted by kind order. */
export function resolveDocuments(loaded: Loaded[]): (Loaded & { kind: ResourceKind; key: string })[] {
  const all: Loaded[] = [];
  for (const l of loaded) {
    all.push(l);
    const kind = kindOf(l.doc.kind);
    for (const extra of kind?.expand?.(l.doc) ?? []) all.push({ ...l, doc: extra as Doc });
  }
  const problems: string[] = [];
  const seen = new Set<string>();
  const out = all.flatMap((l) => {
    const kind = kindOf(l.doc.kind);
    if (!kind) {
      problems.push(
        `${l.file}: unknown kind ${l.doc.kind} (known: ${resourceKinds.map((k) => k.kind).join(', ')})`,
      );
      return [];
    }
    const issues = kind.check(l.doc);
    if (issues.length) {
      problems.push(...issues.map((i) => `${l.file}: ${kind.kind} ${String(l.doc.slug ?? '')}: ${i}`));
      return [];
    }
    const key = kind.key(l.doc);
    if (seen.has(`${kind.kind}:${key}`)) problems.push(`${l.file}: ${kind.kind} ${key} is named twice`);
    seen.add(`${kind.kind}:${key}`);
    return [{ ...l, kind, key }];
  });
  if (problems.length) throw new CliError(ExitCode.failed, problems.join('\n'));
  // Stable: file order within a kind.
  return out
    .map((r, i) => ({ r, i }))
    .sort((a, b) => a.r.kind.order - b.r.kind.order || a.i - b.i)
    .map((x) => x.r);
}

/** The record of what apply manages for one API address, organization and set of files. */
export function statePath(
  explicit: string | undefined,
  baseUrl: string,
  org: string,
  targets: string[],
): string {
  if (explicit) return explicit;
  const id = crypto
    .createHash('sha256')
    .update(JSON.stringify([baseUrl, org, targets.map((t) => path.resolve(t)).sort()]))
    .digest('hex')
    .slice(0, 16);
  return path.join(configDir(), 'apply-state', `${org}-${id}.json`);
}

function readState(file: string): State | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as State;
  } catch {
    return null;
  }
}

function writeState(file: string, state: State) {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

export type ApplyOptions = {
  targets: string[];
  dryRun: boolean;
  prune: boolean;
  stateFile: string;
  baseUrl: string;
  onLine: (line: PlanLine) => void;
};

/**
 * Plans each resource against the server and, unless dry-run, applies it before planning the
 * next (so later kinds see earlier ones). With prune, what an earlier apply of the same state
 * managed and the files no longer name is deleted, last kind first.
 */
export async function runApply(ctx: ApplyContext, opts: ApplyOptions): Promise<PlanLine[]> {
  const resources = resolveDocuments(loadDocuments(opts.targets, ctx.env));
  const previous = readState(opts.stateFile);
  if (previous && (previous.organization !== ctx.org || previous.base_url !== opts.baseUrl)) {
    throw new CliError(
      ExitCode.failed,
      `state ${opts.stateFile} belongs to ${previous.organization} at ${previous.base_url}`,
    );
  }
  const planned = new Map<string, Change>();
  const specHashes = new Map<string, string>();
  // Every check against the server comes before the first write: a refused file set leaves the
  // organization as it was (no version pushed, nothing deployed).
  const refusals: Refusal[] = [];
  for (const r of resources) {
    refusals.push(...((await r.kind.precheck?.({ ...ctx, dir: r.dir, planned, specHashes }, r.doc)) ?? []));
  }
  if (refusals.length) throw new ApplyRefused(refusals);
  const done: Ref[] = [];
  const lines: PlanLine[] = [];
  const emit = (line: PlanLine) => {
    lines.push(line);
    opts.onLine(line);
  };
  const keep = (refs: Ref[]) =>
    !ctx.dryRun &&
    writeState(opts.stateFile, { base_url: opts.baseUrl, organization: ctx.org, resources: refs });
  const named = new Set(resources.map((r) => `${r.kind.kind}:${r.key}`));
  const earlier = (previous?.resources ?? []).filter((r) => !named.has(`${r.kind}:${r.key}`));
  try {
    for (const r of resources) {
      const rctx = { ...ctx, dir: r.dir, planned, specHashes };
      const change = await r.kind.plan(rctx, r.doc);
      planned.set(`${r.kind.kind}:${r.key}`, change);
      if (!ctx.dryRun && change.action !== 'unchanged') await r.kind.apply(rctx, r.doc, change);
      done.push({ kind: r.kind.kind, key: r.key });
      emit({ action: change.action, kind: r.kind.kind, key: r.key, changes: change.changes });
    }
    const stale = earlier
      .map((r) => ({ ref: r, kind: kindOf(r.kind) }))
      .filter((x) => x.kind?.remove)
      .sort((a, b) => (b.kind?.order ?? 0) - (a.kind?.order ?? 0));
    const left: Ref[] = earlier.filter((r) => !kindOf(r.kind)?.remove);
    for (const { ref, kind } of stale) {
      if (!opts.prune) {
        left.push(ref);
        continue;
      }
      // Already gone (deleted by hand, or with its parent) counts as pruned.
      if (!ctx.dryRun) await orNull(kind?.remove?.(ctx, ref.key) ?? Promise.resolve());
      emit({ action: 'delete', kind: ref.kind, key: ref.key, changes: [] });
    }
    keep([...done, ...left]);
  } catch (err) {
    // What was applied stays managed, so a later --prune can still find it.
    keep([...done, ...earlier]);
    const failed = resources[done.length];
    if (err instanceof Error && failed) err.message = `${failed.kind.kind} ${failed.key}: ${err.message}`;
    throw err;
  }
  return lines;
}
