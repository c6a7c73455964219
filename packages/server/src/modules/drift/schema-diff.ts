import {
  classifyTypeChange,
  type NormalEntity,
  type NormalField,
  type NormalSchema,
  nameKey,
} from './schema-normalize';

// The normalized schema diff of docs/drift-and-contracts.md#how-a-report-is-made: pure, so the same
// diff backs the import job, the preview and the unit tests. Consumer knowledge (does a step read
// the column, does it reach a sink through SELECT *) is applied afterwards by the impact analysis,
// which may raise a change's reason code (column_removed_unreferenced → column_removed_referenced,
// column_added → star_widened).

export type Severity = 'safe' | 'warning' | 'breaking';
export const SEVERITIES: Severity[] = ['safe', 'warning', 'breaking'];

export type Change = {
  kind: string;
  path: string;
  before: string | null;
  after: string | null;
  severity: Severity;
  reason_code: string;
  /** Where the change sits, for the impact analysis; never serialized. */
  entity?: string;
  field?: string;
};

export const DEFAULT_SEVERITY: Record<string, Severity> = {
  column_added: 'safe',
  star_widened: 'warning',
  column_removed_referenced: 'breaking',
  column_removed_unreferenced: 'warning',
  type_widened: 'safe',
  type_narrowed: 'breaking',
  type_incompatible: 'breaking',
  type_incompatible_binds: 'warning',
  became_required: 'safe',
  became_nullable: 'warning',
  primary_key_changed: 'warning',
  table_added: 'safe',
  table_removed: 'breaking',
  operation_removed: 'breaking',
  operation_added: 'safe',
  response_field_removed: 'breaking',
  response_field_added: 'safe',
  response_field_type_changed: 'breaking',
  request_param_became_required: 'breaking',
  request_param_removed: 'warning',
};

export const maxSeverity = (...s: Severity[]): Severity =>
  s.reduce<Severity>((a, b) => (SEVERITIES.indexOf(b) > SEVERITIES.indexOf(a) ? b : a), 'safe');

const change = (c: Omit<Change, 'severity'> & { severity?: Severity }): Change => ({
  ...c,
  severity: c.severity ?? DEFAULT_SEVERITY[c.reason_code] ?? 'warning',
});

const byKey = <T extends { name: string }>(list: T[]) => new Map(list.map((x) => [nameKey(x.name), x]));

/** `public.orders.email`, or `GET /orders#email` for an operation's response field. */
export const fieldPath = (e: NormalEntity, field: string) =>
  e.kind === 'operation' ? `${e.name}#${field}` : `${e.name}.${field}`;

function diffFields(a: NormalEntity, b: NormalEntity): Change[] {
  const op = a.kind === 'operation';
  const out: Change[] = [];
  const before = byKey(a.fields);
  const after = byKey(b.fields);
  const removed: NormalField[] = [];
  const added: NormalField[] = [];
  for (const [k, f] of before) {
    const g = after.get(k);
    if (!g) {
      removed.push(f);
      continue;
    }
    const at = { entity: b.name, field: g.name, path: fieldPath(b, g.name) };
    const t = classifyTypeChange(f.type, g.type);
    if (t !== 'same')
      out.push(
        change({
          ...at,
          kind: 'type_changed',
          before: f.type,
          after: g.type,
          reason_code: op ? 'response_field_type_changed' : t,
          ...(op && t === 'type_widened' ? { severity: 'safe' as const } : {}),
        }),
      );
    if (f.nullable !== undefined && g.nullable !== undefined && f.nullable !== g.nullable)
      out.push(
        change({
          ...at,
          kind: 'nullability_changed',
          before: f.nullable ? 'nullable' : 'required',
          after: g.nullable ? 'nullable' : 'required',
          reason_code: g.nullable ? 'became_nullable' : 'became_required',
        }),
      );
  }
  for (const [k, g] of after) if (!before.has(k)) added.push(g);

  // Same import, same type, same place: probably a rename. Place is the nearest preceding
  // column both sides have (so earlier drops do not shift it). It stays a remove plus an add,
  // the add marked so a reader sees the pair, with the severity of the remove.
  const anchor = (list: NormalField[], f: NormalField, other: Map<string, NormalField>) => {
    for (let i = list.indexOf(f) - 1; i >= 0; i--)
      if (other.has(nameKey(list[i].name))) return nameKey(list[i].name);
    return '';
  };
  const renamed = new Set<NormalField>();
  for (const r of removed) {
    const at = anchor(a.fields, r, after);
    const pair = added.find(
      (x) => !renamed.has(x) && x.type === r.type && anchor(b.fields, x, before) === at,
    );
    if (pair) renamed.add(pair);
  }
  for (const f of removed)
    out.push(
      change({
        entity: a.name,
        field: f.name,
        path: fieldPath(a, f.name),
        kind: 'column_removed',
        before: f.type,
        after: null,
        reason_code: op ? 'response_field_removed' : 'column_removed_unreferenced',
      }),
    );
  for (const g of added)
    out.push(
      change({
        entity: b.name,
        field: g.name,
        path: fieldPath(b, g.name),
        kind: 'column_added',
        before: null,
        after: g.type,
        reason_code: renamed.has(g) ? 'rename_suspected' : op ? 'response_field_added' : 'column_added',
        severity: renamed.has(g) ? (op ? 'breaking' : 'warning') : undefined,
      }),
    );

  const keyOf = (e: NormalEntity) =>
    e.fields
      .filter((f) => f.primary_key)
      .map((f) => nameKey(f.name))
      .sort()
      .join(',');
  const [ka, kb] = [keyOf(a), keyOf(b)];
  const known =
    a.fields.some((f) => f.primary_key !== undefined) && b.fields.some((f) => f.primary_key !== undefined);
  if (known && ka !== kb)
    out.push(
      change({
        entity: b.name,
        path: b.name,
        kind: 'key_changed',
        before: ka || null,
        after: kb || null,
        reason_code: 'primary_key_changed',
      }),
    );

  if (op) {
    const pa = a.params ?? {};
    const pb = b.params ?? {};
    for (const [k, req] of Object.entries(pb))
      if (req && pa[k] !== true)
        out.push(
          change({
            entity: b.name,
            path: `${b.name}?${k}`,
            kind: 'parameter_changed',
            before: k in pa ? 'optional' : null,
            after: 'required',
            reason_code: 'request_param_became_required',
          }),
        );
    for (const k of Object.keys(pa))
      if (!(k in pb))
        out.push(
          change({
            entity: b.name,
            path: `${b.name}?${k}`,
            kind: 'parameter_changed',
            before: pa[k] ? 'required' : 'optional',
            after: null,
            reason_code: 'request_param_removed',
          }),
        );
  }
  return out;
}

/** Every change from `before` to `after`, in a stable order (by path, then kind). */
export function diffSchemas(before: NormalSchema, after: NormalSchema): Change[] {
  const out: Change[] = [];
  const a = byKey(before.entities);
  const b = byKey(after.entities);
  for (const [k, e] of a) {
    const f = b.get(k);
    if (f) {
      out.push(...diffFields(e, f));
      continue;
    }
    const operation = e.kind === 'operation';
    out.push(
      change({
        entity: e.name,
        path: e.name,
        kind: operation ? 'operation_removed' : 'table_removed',
        before: operation ? 'operation' : e.kind,
        after: null,
        reason_code: operation ? 'operation_removed' : 'table_removed',
      }),
    );
  }
  for (const [k, f] of b)
    if (!a.has(k)) {
      const operation = f.kind === 'operation';
      out.push(
        change({
          entity: f.name,
          path: f.name,
          kind: operation ? 'operation_added' : 'table_added',
          before: null,
          after: operation ? 'operation' : f.kind,
          reason_code: operation ? 'operation_added' : 'table_added',
        }),
      );
    }
  return out.sort((x, y) => (x.path === y.path ? x.kind.localeCompare(y.kind) : x.path < y.path ? -1 : 1));
}

/** What a report stores and answers: the internal location fields removed. */
export const publicChange = ({ entity: _e, field: _f, ...c }: Change) => c;
