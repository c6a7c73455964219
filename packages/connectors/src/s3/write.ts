import { csvRecords, type Payload, type SinkResult, type StepContext } from '@sluice/engine';
import { csvLine } from '../payloads/csv';
import { tableRows } from '../relational/pipeline';
import { toJsonValue } from '../relational/rows';
import { type ConnectorContext, ConnectorError } from '../types';
import { openS3, type S3Conn } from './client';
import { type Concrete, contentTypeFor, delimiterOf, mimeTypeOf, resolveFormat } from './formats';
import { fullKey, objectExists, putObject, relativeKey } from './objects';
import { s3OperationOf, signalOf } from './pipeline';

// A pipeline sink on S3: the upstream payload streams into one object (a multipart upload
// once it outgrows one part), converted to the key's format: CSV (rows, JSON records or CSV
// as it came), NDJSON or a JSON array (rows, records or CSV by its header), or the raw bytes
// of a file or CSV payload. The object appears only when the upload completes.

type Body = { chunks: AsyncIterable<Uint8Array>; rows(): number; contentType: string };

const invalid = (message: string) => new ConnectorError('INVALID_STATEMENT', message);

const textOf = (v: unknown): string => {
  const j = toJsonValue(v, (b) => b.toString('base64'));
  return typeof j === 'string' ? j : JSON.stringify(j);
};

/** Rows, JSON or CSV payloads as JSON records (rows become objects by column name). */
async function* recordsOf(payload: Payload): AsyncGenerator<unknown[]> {
  if (payload.kind === 'json') {
    yield* payload.batches;
    return;
  }
  const rows = await tableRows(payload);
  const names = rows.columns.map((c) => c.name);
  for await (const batch of rows.batches)
    yield batch.map((row) =>
      Object.fromEntries(names.map((n, i) => [n, toJsonValue(row[i], (b) => b.toString('base64'))])),
    );
}

function jsonBody(payload: Payload, lines: boolean): Body {
  let rows = 0;
  async function* chunks() {
    let first = true;
    if (!lines) yield Buffer.from('[');
    for await (const batch of recordsOf(payload)) {
      if (batch.length === 0) continue;
      rows += batch.length;
      const text = batch.map((r) => JSON.stringify(r) ?? 'null').join(lines ? '\n' : ',');
      yield Buffer.from(lines ? `${text}\n` : first ? text : `,${text}`);
      first = false;
    }
    if (!lines) yield Buffer.from(']');
  }
  return {
    chunks: chunks(),
    rows: () => rows,
    contentType: lines ? 'application/x-ndjson' : 'application/json',
  };
}

function csvBody(payload: Payload, delimiter: string): Body {
  let rows = 0;
  async function* chunks() {
    const table = await tableRows(payload);
    yield Buffer.from(
      csvLine(
        table.columns.map((c) => c.name),
        delimiter,
      ),
    );
    for await (const batch of table.batches) {
      rows += batch.length;
      yield Buffer.from(
        batch
          .map((row) =>
            csvLine(
              row.map((v) => (v === null || v === undefined ? null : textOf(v))),
              delimiter,
            ),
          )
          .join(''),
      );
    }
  }
  return { chunks: chunks(), rows: () => rows, contentType: contentTypeFor('csv', delimiter) };
}

/** CSV bytes as they came; records are counted on the way (the header is not one). */
function rawCsv(payload: Extract<Payload, { kind: 'csv' }>, contentType: string): Body {
  let records = 0;
  async function* chunks() {
    const held: Buffer[] = [];
    async function* tap() {
      for await (const chunk of payload.chunks) {
        const b = Buffer.from(chunk);
        held.push(b);
        yield b;
      }
    }
    for await (const batch of csvRecords(tap(), payload.delimiter)) {
      records += batch.length;
      while (held.length > 0) yield held.shift() as Buffer;
    }
    while (held.length > 0) yield held.shift() as Buffer;
  }
  return { chunks: chunks(), rows: () => Math.max(0, records - (payload.header ? 1 : 0)), contentType };
}

function bodyOf(input: Payload, format: Concrete, delimiter: string, key: string): Body {
  const refuse = () => invalid(`a ${input.kind} payload cannot be written as ${format}`);
  if (input.kind === 'form') throw invalid('a form payload cannot be written to S3');
  switch (format) {
    case 'csv':
      if (input.kind === 'file') throw refuse();
      if (input.kind === 'csv' && input.delimiter === delimiter)
        return rawCsv(input, contentTypeFor('csv', delimiter));
      return csvBody(input, delimiter);
    case 'json':
    case 'ndjson':
      if (input.kind === 'file') throw refuse();
      return jsonBody(input, format === 'ndjson');
    case 'file':
      if (input.kind === 'file') return { chunks: input.chunks, rows: () => 0, contentType: input.mimeType };
      if (input.kind === 'csv') return rawCsv(input, contentTypeFor('csv', input.delimiter));
      return { ...jsonBody(input, true), contentType: mimeTypeOf(key) };
    case 'parquet':
      throw invalid('writing Parquet is not supported; write csv, ndjson or json');
  }
}

/** The format of a sink: the explicit one, else the key's extension, else the payload's own. */
function sinkFormat(explicit: Concrete | 'auto', key: string, input: Payload): Concrete {
  const f = resolveFormat(explicit, key);
  if (explicit !== 'auto' || f !== 'file') return f;
  return input.kind === 'rows' || input.kind === 'json' ? 'ndjson' : input.kind === 'csv' ? 'csv' : 'file';
}

export async function writeS3(
  conn: S3Conn,
  input: Payload,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SinkResult> {
  if (ctx.readOnly)
    throw new ConnectorError(
      'PERMISSION_DENIED',
      'the data source is read-only: a sink cannot write through it',
    );
  const op = s3OperationOf(step);
  const signal = signalOf(step, ctx);
  const s = await openS3(conn, ctx);
  try {
    const key = fullKey(s, op.key as string);
    const format = sinkFormat(op.format, key, input);
    const delimiter = delimiterOf(op.delimiter, key);
    const body = bodyOf(input, format, delimiter, key);
    if (!op.overwrite && (await objectExists(s, key, signal)))
      throw new ConnectorError(
        'QUERY_FAILED',
        `${relativeKey(s, key)} already exists in bucket ${s.bucket} and overwrite is false`,
      );
    const up = await putObject(s, key, body.chunks, {
      contentType: op.content_type ?? body.contentType,
      partSizeBytes: op.part_size_mib * 1024 * 1024,
      signal,
    });
    step.log(
      'info',
      `wrote ${relativeKey(s, key)} to bucket ${s.bucket} as ${format}: ${up.bytes} bytes${up.parts > 1 ? ` in ${up.parts} parts` : ''}, sha256 ${up.digest}`,
    );
    return { rows: body.rows(), bytes: up.bytes };
  } finally {
    s.close();
  }
}
