import { csvRecords } from '@sluice/engine';
import { jsonLineRecords } from '../payloads/json-lines';
import { JsonRecordScanner, JsonScanError, scanRecords } from '../payloads/json-records';
import { ConnectorError } from '../types';

// Records out of object bytes, streamed: JSON documents (a top-level array gives its elements,
// anything else one record), NDJSON lines, CSV rows. Used by pipelines, queries and schema import.

const BATCH = 1000;

export async function* jsonRecords(
  body: AsyncIterable<Uint8Array>,
  partial = false,
): AsyncGenerator<unknown[]> {
  try {
    // A sample cut off mid-document keeps the records that were complete.
    yield* scanRecords(body, new JsonRecordScanner([], null), { batch: BATCH, partial });
  } catch (err) {
    if (err instanceof JsonScanError)
      throw new ConnectorError('QUERY_FAILED', `the object is not valid JSON: ${err.message}`);
    throw err;
  }
}

export function ndjsonRecords(body: AsyncIterable<Uint8Array>, partial = false): AsyncGenerator<unknown[]> {
  // The last line of a sample may be cut off.
  return jsonLineRecords(body, { batch: BATCH, partial, what: 'NDJSON object' });
}

export { csvRecords };
