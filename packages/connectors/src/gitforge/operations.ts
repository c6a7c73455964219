import { type ConnectorContext, ConnectorError, type QueryResult, type SchemaDocument } from '../types';
import { fileMetadataOf, mimeOf, readAll } from './files';
import type { ForgeKind } from './kind';
import { branchOf, type Conn, openForge } from './session';
import { type ForgeStatement, fillPlaceholders, type ObjectKind, objectColumns } from './statements';

// The core `test`, branches, schema import and saved queries of a hosted forge kind, on its SDK
// client (each kind's operations.ts names them).

export function forgeOperations(kind: ForgeKind) {
  async function test(conn: Conn, ctx: ConnectorContext) {
    const s = await openForge(kind, conn, ctx);
    await s.call('read the repository', (c) => c.repository());
  }

  async function listBranches(conn: Conn, ctx: ConnectorContext) {
    const s = await openForge(kind, conn, ctx);
    const [names, repo] = await Promise.all([
      s.call('list branches', (c) => c.branches()),
      s.call('read the repository', (c) => c.repository()),
    ]);
    return names.map((name) => ({ name, is_default: name === repo.defaultBranch }));
  }

  async function importSchema(conn: Conn, ctx: ConnectorContext): Promise<SchemaDocument> {
    const s = await openForge(kind, conn, ctx);
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
    const s = await openForge(kind, conn, ctx);
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
            file: fileMetadataOf(bytes, path),
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
            file: fileMetadataOf(content, path),
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
  return { test, listBranches, importSchema, execute };
}
