import { csvRecords } from '@sluice/engine';
import { JsonRecordScanner, JsonScanError } from '../payloads/json-records';
import { ConnectorError } from '../types';

// Records out of object bytes, streamed: JSON documents (a top-level array gives its elements,
// anything else one record), NDJSON lines, CSV rows. Used by pipelines, queries and schema import.

const BATCH = 1000;

export async function* jsonRecords(
  body: AsyncIterable<Uint8Array>,
  partial = false,
): AsyncGenerator<unknown[]> {
  const scanner = new JsonRecordScanner([], null);
  const decoder = new TextDecoder();
  const batch: unknown[] = [];
  let any = false;
  const add = (text: string) => {
    if (!any && text.trim() === '') return;
    any = true;
    for (const r of scanner.push(text)) batch.push(r);
  };
  try {
    for await (const chunk of body) {
      add(decoder.decode(chunk, { stream: true }));
      while (batch.length >= BATCH) yield batch.splice(0, BATCH);
    }
    add(decoder.decode());
    // A sample cut off mid-document keeps the records that were complete.
    if (any && !partial) for (const r of scanner.end()) batch.push(r);
  } catch (err) {
    if (err instanceof JsonScanError && partial) {
      if (batch.length > 0) yield batch.splice(0);
      return;
    }
    if (err instanceof JsonScanError)
      throw new ConnectorError('QUERY_FAILED', `the object is not valid JSON: ${err.message}`);
    throw err;
  }
  while (batch.length > 0) yield batch.splice(0, BATCH);
}

export async function* ndjsonRecords(
  body: AsyncIterable<Uint8Array>,
  partial = false,
): AsyncGenerator<unknown[]> {
  const decoder = new TextDecoder();
  let rest = '';
  let line = 0;
  let batch: unknown[] = [];
  const parse = (text: string) => {
    line++;
    if (text.trim() === '') return;
    try {
      batch.push(JSON.parse(text));
    } catch {
      throw new ConnectorError('QUERY_FAILED', `line ${line} of the NDJSON object is not valid JSON`);
    }
  };
  for await (const chunk of body) {
    rest += decoder.decode(chunk, { stream: true });
    let nl = rest.indexOf('\n');
    while (nl >= 0) {
      parse(rest.slice(0, nl));
      rest = rest.slice(nl + 1);
      nl = rest.indexOf('\n');
    }
    if (batch.length >= BATCH) {
      yield batch;
      batch = [];
    }
  }
  rest += decoder.decode();
  // The last line of a sample may be cut off.
  if (!partial) parse(rest);
  if (batch.length > 0) yield batch;
}

export { csvRecords };
