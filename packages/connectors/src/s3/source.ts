import { createHash } from 'node:crypto';
import type { Payload, SourceOutput, StepContext } from '@sluice/engine';
import { deferred, tracked } from '../payloads/streams';
import type { ConnectorContext } from '../types';
import { openS3, type S3Conn } from './client';
import { delimiterOf, filenameOf, mimeTypeOf, resolveFormat } from './formats';
import { fullKey, getObject, objectPages, relativeKey } from './objects';
import { openParquet } from './parquet';
import { jsonRecords, ndjsonRecords } from './records';
import { s3OperationOf, signalOf } from './step';

// A pipeline source on S3. `read` streams one object in the payload its format calls for
// (CSV bytes, JSON records from JSON or NDJSON, rows from Parquet, or the raw file);
// `list` gives one JSON record per object below a prefix. Nothing is held whole in memory;
// Parquet is spooled to a temp file because its reader starts at the footer.

export async function readS3(conn: S3Conn, step: StepContext, ctx: ConnectorContext): Promise<SourceOutput> {
  const op = s3OperationOf(step);
  const signal = signalOf(step, ctx);
  const s = await openS3(conn, ctx);
  const ended = deferred<string | null>();
  const finish = () => ended.resolve(null);
  const fail = (err: unknown) => {
    s.close();
    ended.reject(err);
  };
  const done = () => {
    s.close();
    finish();
  };

  if (op.operation === 'list') {
    async function* pages(): AsyncGenerator<unknown[]> {
      let count = 0;
      for await (const page of objectPages(s, op.prefix, signal)) {
        count += page.length;
        yield page.map((o) => ({ ...o, key: relativeKey(s, o.key) }));
      }
      step.log('info', `listed ${count} objects in bucket ${s.bucket}`);
    }
    return {
      payload: { kind: 'json', batches: tracked(pages(), done, fail) },
      nextCursor: () => ended.promise,
    };
  }

  let key: string;
  let obj: Awaited<ReturnType<typeof getObject>>;
  try {
    key = fullKey(s, op.key as string);
    obj = await getObject(s, key, signal);
  } catch (err) {
    s.close();
    throw err;
  }
  const format = resolveFormat(op.format, key, obj.contentType);
  step.log(
    'info',
    `reading ${relativeKey(s, key)} from bucket ${s.bucket} as ${format}${obj.size !== null ? ` (${obj.size} bytes)` : ''}`,
  );
  async function* counted() {
    for await (const chunk of obj.body) {
      step.count({ bytes_in: chunk.length });
      yield chunk;
    }
  }
  let payload: Payload;
  switch (format) {
    case 'csv':
      payload = {
        kind: 'csv',
        delimiter: delimiterOf(op.delimiter, key, obj.contentType),
        header: op.has_header,
        chunks: tracked(counted(), done, fail),
      };
      break;
    case 'json':
    case 'ndjson':
      payload = {
        kind: 'json',
        batches: tracked(format === 'json' ? jsonRecords(counted()) : ndjsonRecords(counted()), done, fail),
      };
      break;
    case 'parquet': {
      let pq: Awaited<ReturnType<typeof openParquet>>;
      try {
        pq = await openParquet(counted());
      } catch (err) {
        obj.close();
        s.close();
        throw err;
      }
      payload = { kind: 'rows', columns: pq.columns, batches: tracked(pq.batches, done, fail) };
      break;
    }
    default: {
      const mimeType = mimeTypeOf(key, obj.contentType);
      const filename = filenameOf(key);
      const hash = createHash('sha256');
      let size = 0;
      async function* hashed() {
        for await (const chunk of counted()) {
          size += chunk.length;
          hash.update(chunk);
          yield chunk;
        }
      }
      // The file payload metadata of the run (bytes never enter a record): logged once read.
      const logged = () => {
        const meta = {
          mime_type: mimeType,
          size_bytes: size,
          digest_algorithm: 'sha256',
          digest: hash.digest('hex'),
          filename,
        };
        step.log('info', `file payload ${JSON.stringify(meta)}`);
        done();
      };
      payload = { kind: 'file', mimeType, filename, chunks: tracked(hashed(), logged, fail) };
    }
  }
  return { payload, nextCursor: () => ended.promise };
}
