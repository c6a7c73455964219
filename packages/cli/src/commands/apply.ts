import type { Command } from 'commander';
import { apiClient, baseUrlOf } from '../api';
import { ApplyRefused, type PlanLine, runApply, statePath } from '../apply/engine';
import { printJson, printLines, printTable } from '../io';
import { activeProfile, defaultOrg, profileToken } from '../profile';
import { collect, withScope } from '../resource';

type ApplyOptions = {
  file: string[];
  org: string;
  dryRun?: boolean;
  prune?: boolean;
  state?: string;
  baseUrl?: string;
  tokenStdin?: boolean;
  json?: boolean;
};

const WORD = { create: 'created', update: 'updated', unchanged: 'unchanged', delete: 'deleted' } as const;

export function applyCommand(program: Command) {
  const cmd = program
    .command('apply')
    .description(
      'Create or update data sources, environments, projects, pipelines, bindings and deployments from ' +
        'JSON or YAML files (docs/cli.md "sluice apply"); idempotent; deploys exactly the specs the files say ' +
        '(older files roll back) and refuses a spec that is not valid before changing anything',
    )
    .requiredOption(
      '-f, --file <path>',
      'a file or a directory of .yaml/.yml/.json files (repeatable)',
      collect,
      [],
    )
    .option(
      '--dry-run',
      'validate the specs and print the plan (create / update / unchanged / delete per resource); change nothing; exit 1 when a spec is not valid',
    )
    .option(
      '--prune',
      'delete what an earlier apply of the same files created and the files no longer name (never anything else)',
    )
    .option(
      '--state <file>',
      'where apply records what it manages (default: under the CLI config directory)',
    );
  withScope(cmd, 'org');
  cmd.action(async (opts: ApplyOptions) => {
    const client = await apiClient(opts);
    const baseUrl = baseUrlOf(opts).toString().replace(/\/+$/, '');
    const profile = activeProfile();
    // Files may say ${SLUICE_BASE_URL}, ${SLUICE_ORG} and credentials_from_env: SLUICE_TOKEN, as
    // this command resolved them (flag, environment or login profile).
    const env = {
      ...process.env,
      SLUICE_BASE_URL: baseUrl,
      SLUICE_ORG: opts.org ?? defaultOrg(),
      SLUICE_TOKEN: process.env.SLUICE_TOKEN || (profile ? profileToken(profile.name) : undefined),
    };
    const dryRun = Boolean(opts.dryRun);
    const print = (l: PlanLine) => {
      if (opts.json) return;
      const word = dryRun ? (l.action === 'unchanged' ? 'unchanged' : l.action) : WORD[l.action];
      const why = l.changes.length ? `  (${l.changes.join(', ')})` : '';
      printLines([`${word.padEnd(10)} ${l.kind} ${l.key}${why}`]);
    };
    let lines: PlanLine[];
    try {
      lines = await runApply(
        { client, org: opts.org, env, dir: process.cwd(), dryRun },
        {
          targets: opts.file,
          dryRun,
          prune: Boolean(opts.prune),
          stateFile: statePath(opts.state, baseUrl, opts.org, opts.file),
          baseUrl,
          onLine: print,
        },
      );
    } catch (err) {
      if (err instanceof ApplyRefused) printRefusals(err, dryRun, Boolean(opts.json));
      throw err;
    }
    const count = (a: PlanLine['action']) => lines.filter((l) => l.action === a).length;
    if (opts.json) return printJson({ dry_run: dryRun, resources: lines });
    const n = (a: PlanLine['action'], planned: string) => `${count(a)} ${dryRun ? planned : WORD[a]}`;
    printLines([
      `${dryRun ? 'plan' : 'applied'}: ${n('create', 'to create')}, ${n('update', 'to update')}, ` +
        `${count('unchanged')} unchanged, ${n('delete', 'to delete')}${dryRun ? ' (dry run: nothing changed)' : ''}`,
    ]);
  });
}

/** The findings of a refused apply (dry run or not): the same table as `pipelines validate`. */
function printRefusals(err: ApplyRefused, dryRun: boolean, json: boolean) {
  if (json) return printJson({ dry_run: dryRun, refused: err.refusals, resources: [] });
  for (const r of err.refusals) {
    printLines([`refused    ${r.kind} ${r.key}: ${r.reason}`]);
    printTable(r.findings, [
      { header: 'SEVERITY', value: (f) => f.severity },
      { header: 'CODE', value: (f) => f.code },
      { header: 'PATH', value: (f) => f.path },
      { header: 'MESSAGE', value: (f) => f.message },
    ]);
  }
}
