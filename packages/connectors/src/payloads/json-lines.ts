import { ConnectorError } from '../types';

// JSON lines (NDJSON) out of a byte stream, in batches: one record per non-empty line, decoded
// as UTF-8 across chunk boundaries. A line that is not JSON fails with QUERY_FAILED naming its
// number (never its text, which may hold anything).

export type JsonLinesOptions = {
  /** Records per yielded batch (default 1,000). */
  batch?: number;
  /** The bytes may stop mid-line (a sample): the last, cut line is dropped. */
  partial?: boolean;
  /** What the lines are, for the message: "file", "NDJSON object". */
  what?: string;
};

export async function* jsonLineRecords(
  body: AsyncIterable<Uint8Array>,
  opts: JsonLinesOptions = {},
): AsyncGenerator<unknown[]> {
  const size = opts.batch ?? 1000;
  const decoder = new TextDecoder();
  let rest = '';
  let line = 0;
  let batch: unknown[] = [];
  const take = (text: string) => {
    line++;
    if (text.trim() === '') return;
    try {
      batch.push(JSON.parse(text));
    } catch {
      throw new ConnectorError(
        'QUERY_FAILED',
        `line ${line} of the ${opts.what ?? 'file'} is not valid JSON`,
      );
    }
  };
  for await (const chunk of body) {
    rest += decoder.decode(chunk, { stream: true });
    let nl = rest.indexOf('\n');
    while (nl >= 0) {
      take(rest.slice(0, nl));
      rest = rest.slice(nl + 1);
      nl = rest.indexOf('\n');
    }
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  rest += decoder.decode();
  if (!opts.partial) take(rest);
  if (batch.length > 0) yield batch;
}
