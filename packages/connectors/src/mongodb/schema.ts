import type { Column } from '../types';
import { bsonType } from './values';

// Field types of sampled documents, unified per field: numbers widen (int, long, double,
// decimal), null only shows when a field is never anything else, and fields that hold
// different kinds list them all ("int|string"). Sub-documents add their fields with dotted
// names, a few levels down.

const NUMERIC = ['int', 'long', 'double', 'decimal'];
const MAX_DEPTH = 3;
const MAX_FIELDS = 500;

export class FieldTypes {
  private readonly seen = new Map<string, Set<string>>();

  add(doc: Record<string, unknown>, prefix = '', depth = 0): void {
    for (const [k, v] of Object.entries(doc)) {
      const name = prefix + k;
      let types = this.seen.get(name);
      if (!types) {
        if (this.seen.size >= MAX_FIELDS) continue;
        types = new Set();
        this.seen.set(name, types);
      }
      const type = bsonType(v);
      types.add(type);
      if (type === 'object' && depth + 1 < MAX_DEPTH)
        this.add(v as Record<string, unknown>, `${name}.`, depth + 1);
    }
  }

  fields(): Column[] {
    return [...this.seen].map(([name, types]) => ({ name, type: unify(types) }));
  }
}

export function unify(types: Set<string>): string {
  const present = [...types].filter((t) => t !== 'null');
  if (present.length === 0) return 'null';
  if (present.every((t) => NUMERIC.includes(t)))
    return NUMERIC[Math.max(...present.map((t) => NUMERIC.indexOf(t)))];
  // Several kinds: numbers still count as one (the widest), the rest by name.
  const numeric = present.filter((t) => NUMERIC.includes(t));
  const rest = present.filter((t) => !NUMERIC.includes(t));
  if (numeric.length > 0) rest.push(NUMERIC[Math.max(...numeric.map((t) => NUMERIC.indexOf(t)))]);
  return rest.length === 1 ? rest[0] : rest.sort().join('|');
}
