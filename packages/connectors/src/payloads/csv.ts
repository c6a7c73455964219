// CSV that connectors write (RFC 4180). Parsing is the engine's (`csvRecords`, `rowsOf`).

/** A field as CSV text: always quoted, so an empty string stays apart from a missing value. */
export function csvQuote(text: string): string {
  return `"${text.replace(/"/g, '""')}"`;
}

/** A CSV line of already-textual values: null is an empty unquoted field. */
export function csvLine(values: (string | null)[], delimiter = ','): string {
  return `${values.map((v) => (v === null ? '' : csvQuote(v))).join(delimiter)}\n`;
}
