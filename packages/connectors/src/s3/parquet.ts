import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { Column } from '@sluice/engine';
import { ConnectorError } from '../types';

// Parquet through DuckDB (the engine's SQL engine): the object is spooled to a temp file,
// because a Parquet reader starts at the footer, then read chunk by chunk. DuckDB runs with
// external access limited to that one directory and no extension loading.

export type ParquetRows = { columns: Column[]; batches: AsyncGenerator<unknown[][]>; close(): Promise<void> };

const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

export async function openParquet(
  body: AsyncIterable<Uint8Array>,
  o: { maxBytes?: number; limit?: number } = {},
): Promise<ParquetRows> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-s3-parquet-'));
  const file = join(dir, 'object.parquet');
  const d = await import('@duckdb/node-api');
  let instance: DuckDBInstance | null = null;
  let conn: DuckDBConnection | null = null;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    conn?.closeSync();
    instance?.closeSync();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    let seen = 0;
    async function* bounded() {
      for await (const chunk of body) {
        seen += chunk.length;
        if (o.maxBytes !== undefined && seen > o.maxBytes)
          throw new ConnectorError(
            'RESPONSE_TOO_LARGE',
            `the Parquet object is larger than ${o.maxBytes} bytes`,
          );
        yield chunk;
      }
    }
    await pipeline(Readable.from(bounded()), createWriteStream(file));
    instance = await d.DuckDBInstance.create(':memory:', {
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
      memory_limit: '256MB',
      threads: '1',
    });
    const c = await instance.connect();
    conn = c;
    await c.run(`SET allowed_directories = [${literal(`${dir}/`)}]`);
    await c.run('SET enable_external_access = false');
    const limit = o.limit !== undefined ? ` LIMIT ${Math.max(0, Math.floor(o.limit))}` : '';
    let result: Awaited<ReturnType<DuckDBConnection['stream']>>;
    try {
      result = await c.stream(`SELECT * FROM read_parquet(${literal(file)})${limit}`);
    } catch {
      throw new ConnectorError('QUERY_FAILED', 'the object is not a readable Parquet file');
    }
    const names = result.deduplicatedColumnNames();
    const columns = result.columnTypes().map((t, i) => ({ name: names[i], type: String(t) }));
    const r = result;
    async function* batches(): AsyncGenerator<unknown[][]> {
      try {
        for (;;) {
          const chunk = await r.fetchChunk();
          if (!chunk || chunk.rowCount === 0) return;
          yield chunk.convertRows(d.JsonDuckDBValueConverter) as unknown[][];
        }
      } finally {
        await close();
      }
    }
    return { columns, batches: batches(), close };
  } catch (err) {
    await close();
    throw err;
  }
}
