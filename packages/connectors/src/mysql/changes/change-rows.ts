import type { Change } from './stream';
import type { CapturedTable } from './tables';
import { valueReader } from './values';

// Change rows from decoded binlog rows (docs/connectors/mysql.md "Change rows"), built with a
// plan per table computed once per read: each column's place in the union and its value
// conversion, or none where the library's value already is the snapshot's shape. A row starts
// as a copy of the table's template (nulls where its columns are not), so building one costs
// one array and the values, nothing per column name or type (docs/benchmarks.md, CDC from MySQL).

type Plan = {
  template: unknown[];
  names: string[];
  places: number[];
  convert: (((v: unknown) => unknown) | null)[];
};

export function changeRows(
  tables: CapturedTable[],
  index: Map<string, number>,
  width: number,
): (c: Change, position: string, committedAt: string) => unknown[] {
  const plans = new Map<CapturedTable, Plan>();
  for (const t of tables) {
    const template: unknown[] = new Array(width).fill(null);
    template[1] = t.name;
    plans.set(t, {
      template,
      names: t.columns.map((c) => c.name),
      places: t.columns.map((c) => index.get(c.name) as number),
      convert: t.columns.map(valueReader),
    });
  }
  return (c, position, committedAt) => {
    const plan = plans.get(c.table) as Plan;
    const out = plan.template.slice();
    out[0] = c.op;
    out[2] = position;
    out[3] = committedAt;
    const { names, places, convert } = plan;
    const values = c.values;
    for (let i = 0; i < names.length; i++) {
      const v = values[names[i]];
      if (v === null || v === undefined) continue;
      const f = convert[i];
      out[places[i]] = f === null ? v : f(v);
    }
    return out;
  };
}
