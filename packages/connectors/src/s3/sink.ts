import type { Payload, SinkResult, StepContext } from '@sluice/engine';
import { csvAsIs, csvBytes, jsonBytes } from '../payloads/encode';
import { assertWritable, type ConnectorContext, ConnectorError } from '../types';
import { openS3, type S3Conn } from './client';
import { type Concrete, contentTypeFor, delimiterOf, mimeTypeOf, resolveFormat } from './formats';
import { fullKey, objectExists, putObject, relativeKey } from './objects';
import { s3OperationOf, signalOf } from './step';

// A pipeline sink on S3: the upstream payload streams into one object (a multipart upload
// once it outgrows one part), converted to the key's format: CSV (rows, JSON records or CSV
// as it came), NDJSON or a JSON array (rows, records or CSV by its header), or the raw bytes
// of a file or CSV payload. The object appears only when the upload completes.

type Body = { chunks: AsyncIterable<Uint8Array>; rows(): number; contentType: string };

const invalid = (message: string) => new ConnectorError('INVALID_STATEMENT', message);

const jsonBody = (input: Payload, lines: boolean): Body => ({
  ...jsonBytes(input, lines),
  contentType: lines ? 'application/x-ndjson' : 'application/json',
});
const csvBody = (input: Payload, delimiter: string): Body => ({
  ...csvBytes(input, delimiter),
  contentType: contentTypeFor('csv', delimiter),
});
const rawCsv = (input: Extract<Payload, { kind: 'csv' }>, contentType: string): Body => ({
  ...csvAsIs(input),
  contentType,
});

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
  assertWritable(ctx);
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
