// Types a value written into a statement's text is cast to (copy-out.ts inlines a query's
// parameters this way, since COPY takes none), named as pg_type names them, schema first: a
// type name the SQL grammar gives a default length (`character` is char(1), `bit` is bit(1))
// would cut the value, and a type of the same name elsewhere on the search_path would be
// taken instead.

/** Built-in types by OID (those a query's parameters are mostly given), as cast targets. */
const BUILT_IN: Record<number, string> = {
  16: 'pg_catalog.bool',
  17: 'pg_catalog.bytea',
  18: 'pg_catalog."char"',
  19: 'pg_catalog.name',
  20: 'pg_catalog.int8',
  21: 'pg_catalog.int2',
  23: 'pg_catalog.int4',
  25: 'pg_catalog.text',
  26: 'pg_catalog.oid',
  114: 'pg_catalog.json',
  700: 'pg_catalog.float4',
  701: 'pg_catalog.float8',
  1042: 'pg_catalog.bpchar',
  1043: 'pg_catalog."varchar"',
  1082: 'pg_catalog.date',
  1083: 'pg_catalog."time"',
  1114: 'pg_catalog."timestamp"',
  1184: 'pg_catalog.timestamptz',
  1186: 'pg_catalog."interval"',
  1266: 'pg_catalog.timetz',
  1700: 'pg_catalog."numeric"',
  2950: 'pg_catalog.uuid',
  3802: 'pg_catalog.jsonb',
  1000: 'pg_catalog._bool',
  1005: 'pg_catalog._int2',
  1007: 'pg_catalog._int4',
  1009: 'pg_catalog._text',
  1015: 'pg_catalog._varchar',
  1016: 'pg_catalog._int8',
  1022: 'pg_catalog._float8',
};

/** Cast targets for `oids` when every one is built in, else null (the server names them). */
export function builtInCasts(oids: readonly number[]): string[] | null {
  const names = oids.map((oid) => BUILT_IN[oid]);
  return names.every((n) => n !== undefined) ? names : null;
}

/**
 * SQL answering, as one text[] value, the cast targets of the parameters of the prepared
 * statement named `$1` (pg_prepared_statements), in order and qualified as above.
 */
export const PREPARED_CASTS_SQL = `(SELECT array_agg(format('%I.%I', n.nspname, t.typname) ORDER BY u.i)
  FROM pg_catalog.pg_prepared_statements p,
    unnest(p.parameter_types::oid[]) WITH ORDINALITY AS u(oid, i)
    JOIN pg_catalog.pg_type t ON t.oid = u.oid
    JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
  WHERE p.name = $1)`;
