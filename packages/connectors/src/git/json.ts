import { dottedPath, JsonRecordScanner, JsonScanError } from '../payloads/json-records';
import { ConnectorError } from '../types';

// A JSON file's records, streamed: the elements of the array at records_path (or of the
// top-level array), else the document as one record.

const JSON_BATCH = 1000;

export async function* jsonRecords(
  body: AsyncIterable<Buffer>,
  recordsPath: string | undefined,
): AsyncGenerator<unknown[]> {
  const scanner = new JsonRecordScanner(dottedPath(recordsPath), null);
  const decoder = new TextDecoder();
  const batch: unknown[] = [];
  let any = false;
  const add = (t: string) => {
    if (!any && t.trim() === '') return;
    any = true;
    for (const r of scanner.push(t)) batch.push(r);
  };
  try {
    for await (const chunk of body) {
      add(decoder.decode(chunk, { stream: true }));
      while (batch.length >= JSON_BATCH) yield batch.splice(0, JSON_BATCH);
    }
    add(decoder.decode());
    if (any) for (const r of scanner.end()) batch.push(r);
  } catch (err) {
    if (err instanceof JsonScanError)
      throw new ConnectorError('QUERY_FAILED', `the file is not JSON: ${err.message}`);
    throw err;
  }
  while (batch.length > 0) yield batch.splice(0, JSON_BATCH);
}
