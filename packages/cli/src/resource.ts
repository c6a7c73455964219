import type { paths, SluiceClient } from '@sluice/client';
import { unwrap } from '@sluice/client';
import { type Command, InvalidArgumentError } from 'commander';
import { type ApiOptions, apiClient, withApiOptions } from './api';
import { applySet, readObjectFile } from './document';
import { CliError, ExitCode } from './exit';
import { orgOption } from './flags';
import { printJson, printLines, printTable } from './io';

// The kit every resource command is built from: scope flags, path filling, one list pager, one
// table and record printer, bodies from a file plus --set, and one follow loop. A noun file
// (commands/<noun>.ts) declares its paths, columns and verbs; nothing here knows a resource.

export type ApiPath = keyof paths;
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type Row = Record<string, unknown>;
export type Column = { header: string; value: (row: Row) => unknown };
export type Scope = 'org' | 'project' | 'env' | 'orgEnv';
export type CommonOptions = ApiOptions & {
  org: string;
  project?: string;
  env?: string;
  confirm?: string;
  file?: string;
  set?: string[];
} & Record<string, unknown>;

/** Columns by field name; `UPPER` header. */
export const cols = (...fields: string[]): Column[] =>
  fields.map((f) => ({ header: f.toUpperCase(), value: (r) => r[f] }));

/** Adds the flags a scope needs: --org always, --project and --env as the paths need them. */
export function withScope(cmd: Command, scope: Scope): Command {
  cmd.addOption(orgOption());
  if (scope === 'project' || scope === 'env') cmd.requiredOption('--project <slug>', 'project slug');
  if (scope === 'env' || scope === 'orgEnv') cmd.requiredOption('--env <slug>', 'environment slug');
  return withApiOptions(cmd);
}

/**
 * Path parameters for a template: organization/project/environment from the flags, every other
 * `{name}` from the positional arguments in order.
 */
export function pathParams(template: string, opts: CommonOptions, args: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const rest = [...args];
  for (const [, name] of template.matchAll(/\{([a-z_]+)\}/g)) {
    const fromFlag = { organization: opts.org, project: opts.project, environment: opts.env }[name];
    const value = fromFlag ?? rest.shift();
    if (!value) throw new CliError(ExitCode.failed, `missing ${name}`);
    out[name] = value;
  }
  return out;
}

type Init = { path?: Record<string, string>; query?: Record<string, unknown>; body?: unknown };
type LooseClient = Record<
  Method,
  (p: string, init: unknown) => Promise<{ data?: unknown; response: Response }>
>;

/**
 * One call through the typed client. Paths are checked against the OpenAPI paths (`ApiPath`);
 * bodies are the server's to validate, so a file can carry any field the API accepts.
 */
export async function call<T = Row>(
  client: SluiceClient,
  method: Method,
  path: ApiPath,
  init: Init = {},
): Promise<{ data: T; status: number }> {
  const loose = client as unknown as LooseClient;
  const result = await loose[method](path, {
    params: { path: init.path ?? {}, query: init.query },
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
  return { data: (await unwrap(Promise.resolve(result))) as T, status: result.response.status };
}

// ---- lists ----

export type Page = Row & { has_more?: boolean; next_cursor?: string | null };
export type ListOptions = { limit: number; cursor?: string; all?: boolean; sortBy?: string; order?: string };

function pageSize(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new InvalidArgumentError('an integer from 1 to 100');
  return n;
}

export function withListOptions(cmd: Command): Command {
  return cmd
    .option('--limit <n>', 'page size, 1 to 100', pageSize, 20)
    .option('--cursor <cursor>', 'continue from a previous page (its next_cursor)')
    .option('--all', 'follow next_cursor until everything is listed')
    .option('--sort-by <field>', 'sort field (see docs/cli.md for each list)')
    .option('--order <asc|desc>', 'sort order');
}

export const listQuery = (o: ListOptions) => ({
  limit: o.limit,
  ...(o.cursor ? { cursor: o.cursor } : {}),
  ...(o.sortBy ? { sort_by: o.sortBy } : {}),
  ...(o.order ? { order: o.order } : {}),
});

/** One page, or with --all every page; prints --json as the API's list shape or a table. */
export async function listAndPrint(
  fetchPage: (query: Record<string, unknown>) => Promise<Page>,
  key: string,
  columns: Column[],
  opts: ListOptions & { json?: boolean },
) {
  const rows: Row[] = [];
  let query: Record<string, unknown> = listQuery(opts);
  for (;;) {
    const page = await fetchPage(query);
    if (!opts.all) {
      if (opts.json) return printJson(page);
      printTable((page[key] as Row[]) ?? [], columns);
      if (page.has_more) process.stderr.write(`more: --cursor ${page.next_cursor} (or --all)\n`);
      return;
    }
    rows.push(...((page[key] as Row[]) ?? []));
    if (!page.has_more || !page.next_cursor) break;
    query = { ...query, cursor: page.next_cursor };
  }
  if (opts.json) return printJson({ [key]: rows, has_more: false, next_cursor: null, prev_cursor: null });
  printTable(rows, columns);
}

// ---- single records ----

const cell = (v: unknown) =>
  v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v);

/** `field: value` lines for people; nested values as compact JSON. */
export function printRecord(row: Row, json?: boolean) {
  if (json) return printJson(row);
  const width = Math.max(0, ...Object.keys(row).map((k) => k.length));
  printLines(Object.entries(row).map(([k, v]) => `${`${k}:`.padEnd(width + 2)}${cell(v)}`));
}

/** Table cells: the same rendering as records. */
export const tableCell = cell;

// ---- bodies ----

export function withBodyOptions(cmd: Command, fields: string[] = []): Command {
  cmd
    .option('-f, --file <path>', 'the request body as a JSON or YAML file (- reads standard input)')
    .option('--set <key=value>', 'set a body field (dotted keys; JSON values)', collect, [] as string[]);
  for (const f of fields) cmd.option(`--${f.replace(/_/g, '-')} <value>`, `the ${f} field`);
  return cmd;
}

export const collect = (v: string, prev: string[]) => [...prev, v];

/** The body: the file, then the named field flags, then each --set. */
export async function bodyOf(opts: CommonOptions, fields: string[] = []): Promise<Row> {
  const body: Row = opts.file ? await readObjectFile(opts.file) : {};
  for (const f of fields) {
    const key = f.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    if (opts[key] !== undefined) body[f] = opts[key];
  }
  for (const s of opts.set ?? []) applySet(body, s);
  return body;
}

// ---- the generic verbs ----

export type Action = {
  name: string;
  description: string;
  method: Method;
  path: ApiPath;
  /** Positional arguments naming the path's own parameters, e.g. `<slug>`. */
  args?: string[];
  /** Body flags; `true` takes --file/--set only. */
  body?: string[] | true;
  /** Extra options, applied before the action runs. */
  options?: (cmd: Command) => Command;
  query?: (opts: CommonOptions) => Record<string, unknown>;
  /** Replaces the body (e.g. a value read from standard input). */
  makeBody?: (opts: CommonOptions, args: string[]) => Promise<Row>;
  print?: (data: Row, opts: CommonOptions, args: string[]) => void;
};

/** Registers one verb under a noun: flags, path filling, the call and the output. */
export function action(noun: Command, scope: Scope, a: Action): Command {
  const cmd = noun.command([a.name, ...(a.args ?? [])].join(' ')).description(a.description);
  withScope(cmd, scope);
  if (a.body) withBodyOptions(cmd, a.body === true ? [] : a.body);
  a.options?.(cmd);
  cmd.action(async (...all: unknown[]) => {
    const args = all.slice(0, (a.args ?? []).length) as string[];
    const opts = all[(a.args ?? []).length] as CommonOptions;
    const body = a.makeBody
      ? await a.makeBody(opts, args)
      : a.body
        ? await bodyOf(opts, a.body === true ? [] : a.body)
        : undefined;
    const client = await apiClient(opts);
    const { data, status } = await call(client, a.method, a.path, {
      path: pathParams(a.path, opts, args),
      query: a.query?.(opts),
      body,
    });
    if (a.print) return a.print(data ?? {}, opts, args);
    if (status === 204) {
      if (opts.json) return printJson({ ok: true });
      return printLines([`${a.name}: done (${args.join(' ') || noun.name()})`]);
    }
    printRecord(data, opts.json);
  });
  return cmd;
}

/** A list verb with the pager; `filters` adds query flags. */
export function listAction(
  noun: Command,
  scope: Scope,
  l: {
    name?: string;
    description: string;
    path: ApiPath;
    key: string;
    columns: Column[];
    args?: string[];
    filters?: { flag: string; query: string; description: string }[];
    paged?: boolean;
  },
): Command {
  const cmd = noun.command([l.name ?? 'list', ...(l.args ?? [])].join(' ')).description(l.description);
  withScope(cmd, scope);
  if (l.paged !== false) withListOptions(cmd);
  for (const f of l.filters ?? []) cmd.option(`--${f.flag} <value>`, f.description);
  cmd.action(async (...all: unknown[]) => {
    const args = all.slice(0, (l.args ?? []).length) as string[];
    const opts = all[(l.args ?? []).length] as CommonOptions & ListOptions;
    const client = await apiClient(opts);
    const filters = Object.fromEntries(
      (l.filters ?? [])
        .map((f) => [f.query, opts[camel(f.flag)]] as const)
        .filter(([, v]) => v !== undefined),
    );
    const fetchPage = async (query: Record<string, unknown>) =>
      (
        await call<Page>(client, 'GET', l.path, {
          path: pathParams(l.path, opts, args),
          query: l.paged === false ? filters : { ...query, ...filters },
        })
      ).data;
    if (l.paged === false) {
      const page = await fetchPage({});
      return opts.json ? printJson(page) : printTable((page[l.key] as Row[]) ?? [], l.columns);
    }
    await listAndPrint(fetchPage, l.key, l.columns, opts);
  });
  return cmd;
}

export const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

// ---- following ----

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Calls `poll` until it says stop (or forever, until interrupted), sleeping between calls.
 * Every --follow (events, run logs) goes through here.
 */
export async function followLoop(poll: () => Promise<boolean>, intervalMs: number, signal?: AbortSignal) {
  for (;;) {
    if (await poll()) return;
    if (signal?.aborted) return;
    await sleep(intervalMs);
  }
}

/** Body flag helper for routes taking protected_environment_confirmation in the query. */
export const withConfirm = (cmd: Command) =>
  cmd.option('--confirm <env_slug>', 'the environment slug again, required by a protected environment');
export const confirmQuery = (o: CommonOptions) =>
  (o.confirm ? { protected_environment_confirmation: o.confirm } : {}) as Record<string, unknown>;

export const clientOf = apiClient;
