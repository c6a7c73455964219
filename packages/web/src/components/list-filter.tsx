import type { ReactNode } from 'react';
import { Select } from './ui';

// The filters above a list (events, alerts, delivery attempts): a small label over its field.

const labelClass = 'block text-xs font-medium text-slate-600 dark:text-slate-400';

/** A filter's label over its field; `id` is the field's. */
export function FilterField(props: { id: string; label: string; children: ReactNode }) {
  return (
    <div>
      <label htmlFor={props.id} className={labelClass}>
        {props.label}
      </label>
      {props.children}
    </div>
  );
}

type Choice = string | { value: string; label: string };

/** A filter choosing one of `values` (each its own label, or a value with a label); '' is "any". */
export function SelectFilter(props: {
  id: string;
  label: string;
  value: string | undefined;
  values: readonly Choice[];
  /** The label of no choice. */
  any?: string;
  onChange: (value: string | undefined) => void;
}) {
  return (
    <FilterField id={props.id} label={props.label}>
      <Select
        id={props.id}
        value={props.value ?? ''}
        onChange={(e) => props.onChange(e.target.value || undefined)}
      >
        <option value="">{props.any ?? 'Any'}</option>
        {props.values.map((v) =>
          typeof v === 'string' ? (
            <option key={v}>{v}</option>
          ) : (
            <option key={v.value} value={v.value}>
              {v.label}
            </option>
          ),
        )}
      </Select>
    </FilterField>
  );
}
