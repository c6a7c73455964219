import { dottedPath, JsonRecordScanner, JsonScanError, scanRecords } from '../payloads/json-records';
import { ConnectorError } from '../types';

// A JSON file's records, streamed: the elements of the array at records_path (or of the
// top-level array), else the document as one record.

export async function* jsonRecords(
  body: AsyncIterable<Buffer>,
  recordsPath: string | undefined,
): AsyncGenerator<unknown[]> {
  try {
    yield* scanRecords(body, new JsonRecordScanner(dottedPath(recordsPath), null));
  } catch (err) {
    if (err instanceof JsonScanError)
      throw new ConnectorError('QUERY_FAILED', `the file is not JSON: ${err.message}`);
    throw err;
  }
}
