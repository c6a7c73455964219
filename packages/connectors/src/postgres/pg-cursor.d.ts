// pg-cursor ships no type declarations; this covers the part we use.
declare module 'pg-cursor' {
  import type { FieldDef, Submittable } from 'pg';

  type CursorConfig = {
    rowMode?: 'array';
    types?: { getTypeParser(oid: number, format?: string): (value: string) => unknown };
  };

  export default class Cursor implements Submittable {
    constructor(text: string, values?: unknown[], config?: CursorConfig);
    submit: Submittable['submit'];
    read(rows: number): Promise<unknown[][]>;
    close(): Promise<void>;
    /** Filled as the portal answers: fields after the row description, the rest at completion. */
    _result: { fields: FieldDef[]; command: string | null; rowCount: number | null };
  }
}
