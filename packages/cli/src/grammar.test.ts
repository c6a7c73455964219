import type { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';

// The `--help` walk (docs/cli.md "One grammar"): every command's help is rendered from the real
// command tree, and the test fails on a flag outside the vocabulary below, on a scope flag spelled
// another way, on an `--org` that does not default to SLUICE_ORG / the profile, and on a listable
// noun without `<noun> list`. A new flag joins the vocabulary here, on purpose.

const SCOPE = ['--org', '--project', '--env', '--pipeline'];
const VOCABULARY = new Set([
  ...SCOPE,
  // every API command, lists, bodies
  ...['--base-url', '--token-stdin', '--json', '--help', '--version'],
  ...['--limit', '--cursor', '--all', '--sort-by', '--order', '--file', '--set'],
  ...['--name', '--slug', '--description', '--type', '--color', '--role', '--email', '--confirm'],
  ...['--state', '--status', '--severity', '--kind', '--scope', '--reason', '--note', '--default'],
  ...['--enable', '--disable', '--disabled', '--paused', '--pause-note', '--include-deleted'],
  ...['--follow', '--interval', '--wait', '--dry-run', '--prune', '--create'],
  // processes and first run
  ...['--api-addr', '--app-addr', '--workers', '--no-worker', '--concurrency'],
  ...['--code-file', '--code-stdin', '--profile', '--no-save', '--password-stdin', '--current-password'],
  // keys and credentials
  ...['--can-manage-api-keys', '--expires-at', '--credential-env', '--credentials-stdin', '--keys'],
  // pipelines, runs, queries
  ...['--spec', '--spec-hash', '--input', '--input-json', '--run-slug', '--step'],
  ...['--param', '--params-file', '--data-source', '--data-source-slug'],
  // events and alerts
  ...['--action', '--actor', '--actor-type', '--entity', '--entity-type', '--from', '--before'],
  ...['--request-id', '--destination', '--source-kind', '--source-action', '--source-ref'],
  ...['--notification', '--per-notification'],
  // triggers and webhooks
  ...['--cron', '--time-zone', '--overlap', '--catch-up', '--catch-up-window', '--catch-up-max-runs'],
  ...['--jitter', '--start-at', '--end-at', '--map', '--outcome', '--previous-valid-for'],
  ...['--id', '--timestamp'],
  // drift, contracts, proof
  ...['--schema', '--report', '--contract', '--revision', '--compatibility', '--odcs'],
  ...['--candidate', '--commit', '--ref'],
]);
/** Old spellings, accepted but hidden, and the flag each stands for. */
const ALIASES: Record<string, string> = { '--environment': '--env' };
/** `--org` that is not the scope of an API call: the organization to create or to remember. */
const ORG_NOT_A_SCOPE = ['bootstrap', 'setup', 'login', 'billing get', 'billing set'];

type Visit = { name: string; cmd: Command };
function walk(cmd: Command, at: string[] = []): Visit[] {
  return cmd.commands.flatMap((c) => {
    const path = [...at, c.name()];
    return [{ name: path.join(' '), cmd: c }, ...walk(c, path)];
  });
}

/** The long flags `--help` shows, from the rendered text. */
function helpFlags(cmd: Command): string[] {
  const text = cmd.helpInformation();
  const options = text.split(/\n(?=Options:|Commands:|Arguments:)/).find((s) => s.startsWith('Options:'));
  return [...(options ?? '').matchAll(/^ {2}(?:-\w, )?(--[a-z][a-z0-9-]*)/gm)].map((m) => m[1]);
}

const isPaged = (cmd: Command) =>
  cmd.options.some((o) => ['--limit', '--cursor', '--all'].includes(o.long ?? ''));

// The program reads SLUICE_ORG when it is built (on import): set it first, and put it back after,
// since test files share their worker process (vitest.config.ts: isolate false).
const savedOrg = process.env.SLUICE_ORG;
process.env.SLUICE_ORG = 'org-from-env';
const { program } = await import('./main');
if (savedOrg === undefined) delete process.env.SLUICE_ORG;
else process.env.SLUICE_ORG = savedOrg;

describe('the --help walk', () => {
  const commands = walk(program);

  it('walks a command tree of some size', () => {
    expect(commands.length).toBeGreaterThan(100);
  });

  it('uses only flags of the vocabulary, and spells the scope flags one way', () => {
    const outside: string[] = [];
    for (const { name, cmd } of [{ name: 'sluice', cmd: program }, ...commands]) {
      for (const flag of helpFlags(cmd)) if (!VOCABULARY.has(flag)) outside.push(`sluice ${name} ${flag}`);
    }
    expect(outside).toEqual([]);
  });

  it('keeps old spellings as hidden aliases that set the same option', () => {
    const problems: string[] = [];
    for (const { name, cmd } of commands) {
      for (const o of cmd.options as Option[]) {
        if (!o.hidden) continue;
        const target = ALIASES[o.long ?? ''];
        const of = target && cmd.options.find((x) => x.long === target);
        if (!of) problems.push(`sluice ${name}: hidden ${o.long} is no declared alias`);
        else if (o.attributeName() !== of.attributeName())
          problems.push(`sluice ${name}: ${o.long} does not set ${target}`);
      }
      for (const old of Object.keys(ALIASES))
        if (helpFlags(cmd).includes(old)) problems.push(`sluice ${name}: --help shows ${old}`);
    }
    expect(problems).toEqual([]);
  });

  it('defaults --org to SLUICE_ORG (then the profile) in every group', () => {
    const missing = commands
      .filter(
        ({ name, cmd }) => cmd.options.some((o) => o.long === '--org') && !ORG_NOT_A_SCOPE.includes(name),
      )
      .filter(({ cmd }) => cmd.options.find((o) => o.long === '--org')?.defaultValue !== 'org-from-env')
      .map(({ name }) => name);
    expect(missing).toEqual([]);
    // And every command that takes --project or --env takes --org too.
    const unscoped = commands
      .filter(({ cmd }) => cmd.options.some((o) => o.long === '--project' || o.long === '--env'))
      .filter(({ cmd }) => !cmd.options.some((o) => o.long === '--org'))
      .map(({ name }) => name);
    expect(unscoped).toEqual([]);
  });

  it('gives every listable noun `list`', () => {
    const problems: string[] = [];
    for (const { name, cmd } of commands) {
      if (cmd.commands.length > 0 || !isPaged(cmd)) continue;
      const parent = cmd.parent;
      if (parent === program) problems.push(`sluice ${name} lists but is no group with list`);
      else if (!parent?.commands.some((c) => c.name() === 'list'))
        problems.push(`sluice ${name}: its noun has no list`);
    }
    expect(problems).toEqual([]);
    for (const noun of ['events', 'security-events'])
      expect(commands.map((c) => c.name)).toContain(`${noun} list`);
  });
});
