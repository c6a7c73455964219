import { createHash } from 'node:crypto';
import type { Payload, SinkResult, SourceOutput, StepContext } from '@sluice/engine';
import { rowsOf } from '@sluice/engine';
import { z } from 'zod';
import { csvLine } from '../payloads/csv';
import {
  assertWritable,
  type Connection,
  type ConnectorContext,
  type ConnectorDefinition,
  ConnectorError,
  type ProofCheck,
  type QueryResult,
  type SchemaDocument,
} from '../types';
import { forgeProof } from './proof';
import {
  type ForgeStatement,
  fillPlaceholders,
  gitSinkOperation,
  gitSourceOperation,
  type ObjectKind,
  objectColumns,
  objectRowsOperation,
  statementSchema,
} from './statements';
import { type ForgeAuth, forgeError, newAuth } from './transport';

// What the github and gitlab connectors share: everything but the vendor SDK calls, which each
// kind provides as a ForgeClient. Tokens reach the SDKs only through transport.ts.

export type ForgeFile = { body: AsyncIterable<Uint8Array>; size: number | null };

export type ForgeClient = {
  /** Proves the token and the repository; answers the default branch. */
  repository(): Promise<{ defaultBranch: string }>;
  branches(): Promise<string[]>;
  files(ref: string): Promise<{ path: string; size: number | null }[]>;
  readFile(path: string, ref: string): Promise<ForgeFile>;
  commitFile(o: {
    path: string;
    branch: string;
    content: Buffer;
    message: string;
  }): Promise<{ commit: string | null }>;
  /** Normalized rows (objectColumns order), page by page, following the provider's paging. */
  objects(kind: ObjectKind, state: 'open' | 'closed' | 'all'): AsyncIterable<unknown[][]>;
  /** Proof: the provider's immutable repository id. */
  repositoryId(): Promise<string>;
  /** Proof: the commit a branch or commit id names, with its tree. */
  commit(ref: string): Promise<{ sha: string; treeSha: string | null }>;
  /** Proof: creates or updates the named check (a commit status) on the commit. */
  publishCheck(check: ProofCheck): Promise<void>;
};

export type ForgeKind = {
  type: 'github' | 'gitlab';
  label: string;
  objects: readonly ObjectKind[];
  client(config: Record<string, unknown>, auth: ForgeAuth, ctx: ConnectorContext): Promise<ForgeClient>;
};

type Conn = Connection<Record<string, unknown>, Record<string, unknown>>;

export type ForgeSession = Awaited<ReturnType<typeof session>>;

async function session(kind: ForgeKind, conn: Conn, ctx: ConnectorContext) {
  const auth = newAuth(conn.credentials);
  const client = await kind.client(conn.config, auth, ctx);
  /** Runs one provider call; its failure becomes our sanitized error. */
  const call = async <T>(what: string, fn: (c: ForgeClient) => Promise<T>): Promise<T> => {
    try {
      return await fn(client);
    } catch (err) {
      throw forgeError(kind.label, err, auth, what);
    }
  };
  /** The same for a paged stream. */
  async function* stream<T>(what: string, source: () => AsyncIterable<T>): AsyncGenerator<T> {
    try {
      for await (const item of source()) yield item;
    } catch (err) {
      throw forgeError(kind.label, err, auth, what);
    }
  }
  return { client, call, stream };
}

async function branchOf(conn: Conn, s: ForgeSession, given?: string) {
  if (given) return given;
  const configured = conn.config.default_branch;
  if (typeof configured === 'string' && configured) return configured;
  return (await s.call('read the repository', (c) => c.repository())).defaultBranch;
}

const EXT_MIME: Record<string, string> = {
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
  ndjson: 'application/x-ndjson',
  jsonl: 'application/x-ndjson',
  md: 'text/markdown',
  txt: 'text/plain',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  parquet: 'application/vnd.apache.parquet',
};
const extOf = (path: string) => path.split('/').pop()?.split('.').slice(1).pop()?.toLowerCase() ?? '';
const mimeOf = (path: string) => EXT_MIME[extOf(path)] ?? 'application/octet-stream';

type Format = 'csv' | 'tsv' | 'json' | 'ndjson' | 'file';
function formatOf(path: string, given: 'auto' | 'csv' | 'json' | 'file'): Format {
  const ext = extOf(path);
  if (given === 'csv') return ext === 'tsv' ? 'tsv' : 'csv';
  if (given === 'json') return ext === 'ndjson' || ext === 'jsonl' ? 'ndjson' : 'json';
  if (given === 'file') return 'file';
  if (ext === 'csv' || ext === 'tsv') return ext;
  if (ext === 'json') return 'json';
  if (ext === 'ndjson' || ext === 'jsonl') return 'ndjson';
  return 'file';
}

async function readAll(chunks: AsyncIterable<Uint8Array>, max: number, label: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const c of chunks) {
    size += c.length;
    if (size > max)
      throw new ConnectorError('RESPONSE_TOO_LARGE', `the ${label} is larger than ${max} bytes`);
    parts.push(Buffer.from(c));
  }
  return Buffer.concat(parts);
}

function cellText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** The upstream payload as the bytes of the file to commit. */
async function encode(
  input: Payload,
  format: Format,
  max: number,
): Promise<{ bytes: Buffer; rows: number | null }> {
  if (input.kind === 'form')
    throw new ConnectorError('INVALID_STATEMENT', 'a form payload cannot be committed as a file');
  if (
    input.kind === 'file' ||
    (input.kind === 'csv' && (format === 'csv' || format === 'tsv' || format === 'file'))
  ) {
    return { bytes: await readAll(input.chunks, max, 'file to commit'), rows: null };
  }
  const rows = await rowsOf(input);
  const names = rows.columns.map((c) => c.name);
  const parts: string[] = [];
  let size = 0;
  let count = 0;
  const push = (s: string) => {
    size += Buffer.byteLength(s);
    if (size > max)
      throw new ConnectorError('RESPONSE_TOO_LARGE', `the file to commit is larger than ${max} bytes`);
    parts.push(s);
  };
  const record = (row: unknown[]) =>
    Object.fromEntries(
      names.map((n, i) => [
        n,
        row[i] instanceof Date
          ? (row[i] as Date).toISOString()
          : typeof row[i] === 'bigint'
            ? String(row[i])
            : row[i],
      ]),
    );
  if (format === 'json') push('[');
  else if (format !== 'ndjson') push(csvLine(names, format === 'tsv' ? '\t' : ','));
  for await (const batch of rows.batches) {
    for (const row of batch) {
      if (format === 'json') push(`${count ? ',' : ''}\n${JSON.stringify(record(row))}`);
      else if (format === 'ndjson') push(`${JSON.stringify(record(row))}\n`);
      else push(csvLine(row.map(cellText), format === 'tsv' ? '\t' : ','));
      count++;
    }
  }
  if (format === 'json') push('\n]\n');
  return { bytes: Buffer.from(parts.join('')), rows: count };
}

async function* counted(body: AsyncIterable<Uint8Array>, step: StepContext) {
  for await (const c of body) {
    step.count({ bytes_in: c.length });
    yield c instanceof Uint8Array ? c : Buffer.from(c);
  }
}

async function* lines(body: AsyncIterable<Uint8Array>) {
  let rest = '';
  const decoder = new TextDecoder();
  for await (const c of body) {
    rest += decoder.decode(c, { stream: true });
    const parts = rest.split('\n');
    rest = parts.pop() ?? '';
    yield parts;
  }
  rest += decoder.decode();
  if (rest) yield [rest];
}

function fileMetadata(bytes: Buffer, path: string) {
  return {
    mime_type: mimeOf(path),
    size_bytes: bytes.length,
    digest_algorithm: 'sha256' as const,
    digest: createHash('sha256').update(bytes).digest('hex'),
    filename: path.split('/').pop(),
  };
}

export function forgeOperations(kind: ForgeKind) {
  const objectOp = objectRowsOperation(kind.objects);

  async function test(conn: Conn, ctx: ConnectorContext) {
    const s = await session(kind, conn, ctx);
    await s.call('read the repository', (c) => c.repository());
  }

  async function listBranches(conn: Conn, ctx: ConnectorContext) {
    const s = await session(kind, conn, ctx);
    const [names, repo] = await Promise.all([
      s.call('list branches', (c) => c.branches()),
      s.call('read the repository', (c) => c.repository()),
    ]);
    return names.map((name) => ({ name, is_default: name === repo.defaultBranch }));
  }

  async function importSchema(conn: Conn, ctx: ConnectorContext): Promise<SchemaDocument> {
    const s = await session(kind, conn, ctx);
    const ref = await branchOf(conn, s);
    const files = await s.call('list the repository files', (c) => c.files(ref));
    return {
      schema_type: 'file',
      type: kind.type,
      files: [
        ...files.slice(0, 5000).map((f) => ({
          name: f.path,
          fields: [],
          mime_type: mimeOf(f.path),
          resource_id: `git:${ref}:${f.path}`,
        })),
        ...kind.objects.map((o) => ({ name: o, fields: objectColumns[o], resource_id: `object_rows:${o}` })),
      ],
      ...(files.length > 5000
        ? {
            diagnostics: [
              {
                name: 'files',
                target: ref,
                severity: 'warning',
                code: 'TRUNCATED',
                message: `only the first 5000 of ${files.length} files are listed`,
              },
            ],
          }
        : {}),
    };
  }

  async function execute(
    conn: Conn,
    statement: ForgeStatement,
    parameters: Record<string, unknown>,
    ctx: ConnectorContext,
  ): Promise<QueryResult> {
    const s = await session(kind, conn, ctx);
    const fill = (v: string | undefined) => (v === undefined ? undefined : fillPlaceholders(v, parameters));
    switch (statement.operation) {
      case 'list_branches': {
        const branches = await listBranches(conn, ctx);
        return {
          result_type: 'git',
          payload: { operation: 'list_branches', branches },
          row_count: branches.length,
          truncated: false,
        };
      }
      case 'list_files': {
        const ref = await branchOf(conn, s, fill(statement.ref));
        const all = await s.call('list the repository files', (c) => c.files(ref));
        const files = all.slice(0, ctx.limits.maxRows);
        return {
          result_type: 'git',
          payload: { operation: 'list_files', ref, files },
          row_count: all.length,
          truncated: files.length < all.length,
        };
      }
      case 'read_file': {
        const path = fill(statement.path)!;
        const ref = await branchOf(conn, s, fill(statement.ref));
        const file = await s.call(`read ${path}`, (c) => c.readFile(path, ref));
        const bytes = await s.call(`read ${path}`, () =>
          readAll(file.body, ctx.limits.maxResponseBytes, 'file'),
        );
        const max = ctx.limits.maxResultBytes;
        const textual =
          /^(text\/|application\/(json|x-ndjson|yaml))/.test(mimeOf(path)) ||
          !bytes.subarray(0, 8000).includes(0);
        const slice = bytes.subarray(0, textual ? max : Math.floor((max * 3) / 4));
        return {
          result_type: 'git',
          payload: {
            operation: 'read_file',
            ref,
            path,
            file: fileMetadata(bytes, path),
            content: textual ? slice.toString('utf8') : slice.toString('base64'),
            content_encoding: textual ? 'text' : 'base64',
          },
          row_count: null,
          truncated: slice.length < bytes.length,
        };
      }
      case 'commit_file': {
        if (ctx.readOnly)
          throw new ConnectorError(
            'UNSUPPORTED_OPERATION',
            'the data source is read-only: commit_file is refused',
          );
        const path = fill(statement.path)!;
        const branch = await branchOf(conn, s, fill(statement.branch));
        const content = Buffer.from(fill(statement.content)!);
        const out = await s.call(`commit ${path}`, (c) =>
          c.commitFile({ path, branch, content, message: fill(statement.message)! }),
        );
        return {
          result_type: 'git',
          payload: {
            operation: 'commit_file',
            branch,
            path,
            commit: out.commit,
            file: fileMetadata(content, path),
          },
          row_count: null,
          truncated: false,
        };
      }
      default: {
        const object: ObjectKind = statement.operation === 'list_issues' ? 'issues' : kind.objects[1];
        const columns = objectColumns[object];
        const cap = Math.min(statement.max_rows ?? ctx.limits.maxRows, ctx.limits.maxRows);
        const rows: Record<string, unknown>[] = [];
        let truncated = false;
        for await (const batch of s.stream(`list ${object}`, () =>
          s.client.objects(object, statement.state),
        )) {
          for (const r of batch) {
            if (rows.length >= cap) {
              truncated = true;
              break;
            }
            rows.push(Object.fromEntries(columns.map((c, i) => [c.name, r[i]])));
          }
          if (truncated) break;
        }
        return {
          result_type: 'object_rows',
          payload: { object, columns, rows },
          row_count: rows.length,
          truncated,
        };
      }
    }
  }

  async function read(conn: Conn, step: StepContext, ctx: ConnectorContext): Promise<SourceOutput> {
    const op = step.render(step.step.operation) as Record<string, unknown>;
    const s = await session(kind, conn, ctx);
    if (op.operation_type === 'object_rows') {
      const parsed = objectOp.safeParse(op);
      if (!parsed.success)
        throw new ConnectorError(
          'INVALID_STATEMENT',
          `object_rows operation: ${parsed.error.issues[0]?.message}`,
        );
      const { object, state, max_rows } = parsed.data;
      async function* batches() {
        let n = 0;
        for await (const batch of s.stream(`list ${object}`, () => s.client.objects(object, state))) {
          const take = max_rows === undefined ? batch : batch.slice(0, Math.max(0, max_rows - n));
          n += take.length;
          if (take.length) yield take;
          if (max_rows !== undefined && n >= max_rows) return;
        }
      }
      return {
        payload: { kind: 'rows', columns: objectColumns[object], batches: batches() },
        nextCursor: async () => null,
      };
    }
    const parsed = gitSourceOperation.safeParse(op);
    if (!parsed.success)
      throw new ConnectorError('INVALID_STATEMENT', `git operation: ${parsed.error.issues[0]?.message}`);
    const { path } = parsed.data;
    const ref = await branchOf(conn, s, parsed.data.ref);
    const file = await s.call(`read ${path}`, (c) => c.readFile(path, ref));
    step.log('info', `read ${path} at ${ref} from ${kind.label}`);
    const body = s.stream(`read ${path}`, () => counted(file.body, step));
    const format = formatOf(path, parsed.data.format);
    let payload: Payload;
    if (format === 'csv' || format === 'tsv') {
      payload = { kind: 'csv', delimiter: format === 'tsv' ? '\t' : ',', header: true, chunks: body };
    } else if (format === 'ndjson') {
      payload = {
        kind: 'json',
        batches: (async function* () {
          for await (const ls of lines(body)) {
            const items = ls.filter((l) => l.trim()).map((l) => JSON.parse(l));
            if (items.length) yield items;
          }
        })(),
      };
    } else if (format === 'json') {
      payload = {
        kind: 'json',
        batches: (async function* () {
          const doc = JSON.parse(
            (await readAll(body, ctx.limits.maxResponseBytes, 'JSON file')).toString('utf8'),
          );
          const items = Array.isArray(doc) ? doc : [doc];
          for (let i = 0; i < items.length; i += 1000) yield items.slice(i, i + 1000);
        })(),
      };
    } else {
      payload = { kind: 'file', mimeType: mimeOf(path), filename: path.split('/').pop(), chunks: body };
    }
    return { payload, nextCursor: async () => null };
  }

  async function write(
    conn: Conn,
    input: Payload,
    step: StepContext,
    ctx: ConnectorContext,
  ): Promise<SinkResult> {
    assertWritable(ctx);
    const op = step.render(step.step.operation) as Record<string, unknown>;
    const parsed = gitSinkOperation.safeParse(op);
    if (!parsed.success)
      throw new ConnectorError('INVALID_STATEMENT', `git operation: ${parsed.error.issues[0]?.message}`);
    const s = await session(kind, conn, ctx);
    const { path } = parsed.data;
    const branch = await branchOf(conn, s, parsed.data.branch);
    const { bytes, rows } = await encode(
      input,
      formatOf(path, parsed.data.format),
      ctx.limits.maxResponseBytes,
    );
    const message = parsed.data.message ?? `Sluice run ${step.runSlug}: write ${path}`;
    const out = await s.call(`commit ${path}`, (c) =>
      c.commitFile({ path, branch, content: bytes, message }),
    );
    step.log(
      'info',
      `committed ${path} (${bytes.length} bytes) to ${branch}${out.commit ? ` as ${out.commit.slice(0, 12)}` : ''}`,
    );
    return { rows: rows ?? 0, bytes: bytes.length };
  }

  const proof = forgeProof({ open: (conn, ctx) => session(kind, conn, ctx), branchOf });
  return {
    test,
    query: { statementSchema: statementSchema(kind.type), resultType: 'git', execute },
    discover: { importSchema },
    branches: { listBranches },
    // A source reads a file (git) or a collection (object_rows); a sink commits a file.
    source: { operation: z.discriminatedUnion('operation_type', [gitSourceOperation, objectOp]), read },
    sink: { operation: gitSinkOperation, write },
    proof: { repositoryId: proof.repositoryId, snapshot: proof.snapshot },
    checks: { publish: proof.publish },
  } satisfies Partial<ConnectorDefinition>;
}
