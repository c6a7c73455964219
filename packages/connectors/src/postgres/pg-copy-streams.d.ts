// pg-copy-streams ships no type declarations; this covers the part we use.
declare module 'pg-copy-streams' {
  import type { Writable } from 'node:stream';
  import type { Submittable } from 'pg';

  export interface CopyStreamQuery extends Writable, Submittable {
    rowCount: number;
  }
  export function from(text: string): CopyStreamQuery;
  const copyStreams: { from: typeof from };
  export default copyStreams;
}
