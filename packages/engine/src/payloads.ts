// What flows between steps (docs/pipeline-spec.md#payloads): rows, JSON, CSV, files and forms,
// always as async streams so no step holds a whole dataset in memory. A payload is consumed once;
// the executor spools it when more than one step reads it.

export type Column = { name: string; type: string };

/**
 * The same rows as a database's own bulk format, offered by a source beside its batches. A
 * sink of the same family may take it instead of the batches (never both): a PostgreSQL
 * source feeding a PostgreSQL sink hands over COPY bytes untouched. Whoever does not know the
 * format reads the batches and never calls `open`.
 */
export type NativeRows = {
  /** `postgres-copy`: the output of `COPY (query) TO STDOUT`, binary or text per `open`. */
  format: 'postgres-copy';
  /** The source's type of each column, aligned with `columns`: type OID and format_type text. */
  types: { oid: number; name: string }[];
  /**
   * Starts the bulk read in place of the batches: the stream of bytes, and the rows it held
   * once it ended (the source's own count, e.g. COPY's command tag). With `framed` asked, the
   * source may hand over the COPY's CopyData messages of the wire protocol themselves ('d', an
   * int32 length, the bytes; whole messages in every chunk, as the server sent them), which a
   * PostgreSQL sink writes to its own socket unchanged; `framed` in the answer says whether it
   * did (the bytes then count each message's 5-byte header).
   */
  open(
    format: 'binary' | 'text',
    opts?: { framed?: boolean },
  ): { chunks: AsyncIterable<Uint8Array>; rows(): number; framed?: boolean };
};

/**
 * A payload's records as bytes, offered beside its batches to a consumer that parses them
 * itself (DuckDB reading a JSON body, PostgreSQL's COPY reading CSV). A consumer reads either
 * the batches or these chunks, never both; the meter counts whichever it took.
 */
export type RecordBytes = {
  chunks: AsyncIterable<Uint8Array>;
  /** How many records (rows) the chunks held; known once they were read to their end. */
  count(): number;
};

/** Typed columns, rows as arrays in column order, in batches (or natively, see NativeRows, or
 * as COPY CSV, see `csv`). */
export type RowsPayload = {
  kind: 'rows';
  columns: Column[];
  batches: AsyncIterable<unknown[][]>;
  native?: NativeRows;
  /**
   * The same rows as PostgreSQL COPY input, when the producer can write them so: `csv` (the
   * default) is COPY's CSV dialect (no header, `,`, NULL an unquoted empty field, text always
   * quoted, nested values as JSON text; DuckDB); `text` is COPY's text format (tab-separated,
   * backslash escapes, NULL `\N`; each value the text the row's value has; MySQL/MariaDB).
   */
  csv?: RecordBytes & {
    format?: 'csv' | 'text';
    /**
     * Asks for the same chunks as PostgreSQL COPY **binary** for these target column types
     * (aligned with `columns`; type OID and format_type text), before they are read: null when
     * they will be, else why not (they stay in `format`). A producer offers it where it can
     * write each value as the target's input function would read its text (MySQL/MariaDB).
     */
    asBinary?(targets: { oid: number; name: string }[]): string | null;
  };
};
/** JSON records (any JSON value each), in batches. */
export type JsonPayload = {
  kind: 'json';
  batches: AsyncIterable<unknown[]>;
  /**
   * The same records as the bytes of one JSON array, when the source has them so (HTTP);
   * `lines`: already newline-delimited, one record per line (the rules of json-lines.ts).
   */
  array?: RecordBytes & { lines?: boolean };
};
/** CSV text as bytes. */
export type CsvPayload = {
  kind: 'csv';
  delimiter: string;
  header: boolean;
  chunks: AsyncIterable<Uint8Array>;
};
/** Raw bytes with metadata; bytes never enter run records (docs/pipeline-spec.md#payloads). */
export type FilePayload = {
  kind: 'file';
  mimeType: string;
  filename?: string;
  chunks: AsyncIterable<Uint8Array>;
};
export type FormField = { name: string; value: string } | { name: string; file: FilePayload };
export type FormPayload = { kind: 'form'; encoding: 'urlencoded' | 'multipart'; fields: FormField[] };

export type Payload = RowsPayload | JsonPayload | CsvPayload | FilePayload | FormPayload;
export type PayloadKind = Payload['kind'];

/** File payload metadata as records show it: digest and size, never bytes. */
export type FileMetadata = {
  mime_type: string;
  size_bytes: number;
  digest_algorithm: 'sha256';
  digest: string;
  filename?: string;
};

/** Rows and bytes seen by a step, for the run record. */
export type Counters = { rows_in: number; rows_out: number; bytes_in: number; bytes_out: number };

export type SourceOutput = {
  payload: Payload;
  /**
   * Resolves once the payload has been fully consumed, with the cursor the next run should
   * start from (null when the source has none). Committed only after every sink succeeded.
   */
  nextCursor(): Promise<string | null>;
};

export type SinkResult = { rows: number; bytes: number };

/** Turns any payload into rows when a consumer needs rows (transforms, SQL sinks). */
export type RowsAdapter = (payload: Payload) => Promise<RowsPayload>;
