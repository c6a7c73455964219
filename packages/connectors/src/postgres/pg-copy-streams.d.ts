// pg-copy-streams ships no type declarations; this covers the part we use.
declare module 'pg-copy-streams' {
  import type { Readable, Writable } from 'node:stream';
  import type { Submittable } from 'pg';

  export interface CopyStreamQuery extends Writable, Submittable {
    /** Rows of the COPY's command tag, once it completed. */
    rowCount: number;
  }
  export interface CopyToStreamQuery extends Readable, Submittable {
    /** Rows of the COPY's command tag, once the stream ended. */
    rowCount: number;
  }
  export function from(text: string): CopyStreamQuery;
  export function to(text: string): CopyToStreamQuery;
  const copyStreams: { from: typeof from; to: typeof to };
  export default copyStreams;
}
