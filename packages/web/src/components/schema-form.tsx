import type { UseFormRegister } from 'react-hook-form';
import type { JsonSchema } from '../lib/types';
import { Field, Input, Select } from './ui';

// A small JSON-Schema renderer for connector config and credentials: the server's zod schemas,
// served by GET /connectors, decide the fields; the server validates again on save.

const typeOf = (s: JsonSchema): string => {
  if (s.enum) return 'enum';
  const t = Array.isArray(s.type) ? s.type.find((x) => x !== 'null') : s.type;
  if (t) return t;
  // A union with a boolean branch (ssl: true | {mode…}) is offered as its boolean form.
  const branches = s.anyOf ?? s.oneOf ?? [];
  if (branches.some((b) => b.type === 'boolean')) return 'boolean';
  return 'json';
};

const ACRONYMS: Record<string, string> = {
  ssl: 'SSL',
  url: 'URL',
  id: 'ID',
  api: 'API',
  tls: 'TLS',
  ca: 'CA',
  sql: 'SQL',
};
const labelOf = (key: string) =>
  key
    .split('_')
    .map((w) => ACRONYMS[w] ?? w)
    .join(' ')
    .replace(/^./, (c) => c.toUpperCase());

export type FormValues = Record<string, Record<string, unknown>>;

/**
 * Whether a field is labelled "(optional)". The schemas are served in their input form, so a
 * field with a default is not `required`; but a default of '' (a password the server may not ask
 * for) means an empty input is itself the value, not something left out, so it keeps its plain label.
 */
const optionalLabel = (schema: JsonSchema | null, key: string, prop: JsonSchema) =>
  !(schema?.required ?? []).includes(key) && prop.default !== '';

/** Form values for a schema: its defaults, or the stored values when editing. */
export function initialValues(schema: JsonSchema | null, stored: Record<string, unknown> = {}) {
  const out: Record<string, unknown> = {};
  for (const [key, prop] of Object.entries(schema?.properties ?? {})) {
    const v = stored[key] ?? prop.default;
    const t = typeOf(prop);
    if (t === 'boolean') out[key] = v === true;
    else if (t === 'json' || t === 'object' || t === 'array')
      out[key] = v === undefined ? '' : JSON.stringify(v);
    else out[key] = v === undefined || v === null ? '' : String(v);
  }
  return out;
}

/** Turns form strings back into the schema's types; empty optional fields are left out. */
export function toPayload(schema: JsonSchema | null, values: Record<string, unknown> = {}) {
  const out: Record<string, unknown> = {};
  for (const [key, prop] of Object.entries(schema?.properties ?? {})) {
    const v = values[key];
    const t = typeOf(prop);
    if (t === 'boolean') out[key] = Boolean(v);
    else if (v === '' || v === undefined) continue;
    else if (t === 'integer' || t === 'number') out[key] = Number(v);
    else if (t === 'json' || t === 'object' || t === 'array') out[key] = JSON.parse(String(v));
    else out[key] = v;
  }
  return out;
}

export function SchemaFields(props: {
  schema: JsonSchema | null;
  prefix: 'config' | 'credentials';
  register: UseFormRegister<FormValues>;
  errors?: Record<string, string>;
  writeOnly?: boolean;
  storedSecret?: boolean;
}) {
  const required = new Set(props.schema?.required ?? []);
  return (
    <div className="grid gap-4 sm:grid-cols-2">
      {Object.entries(props.schema?.properties ?? {}).map(([key, prop]) => {
        const name = `${props.prefix}.${key}` as const;
        const t = typeOf(prop);
        const label = `${labelOf(key)}${optionalLabel(props.schema, key, prop) ? ' (optional)' : ''}`;
        const error = props.errors?.[`${props.prefix}.${key}`] ?? props.errors?.[key];
        if (t === 'boolean') {
          return (
            <div key={key} className="flex items-start gap-2 sm:col-span-2">
              <input
                id={`f-${name}`}
                type="checkbox"
                className="mt-1 h-4 w-4"
                {...props.register(name)}
                aria-describedby={`f-${name}-hint`}
              />
              <div>
                <label htmlFor={`f-${name}`} className="text-sm font-medium">
                  {labelOf(key)}
                </label>
                <p id={`f-${name}-hint`} className="text-xs text-slate-600 dark:text-slate-400">
                  {prop.description}
                </p>
              </div>
            </div>
          );
        }
        return (
          <Field key={key} label={label} hint={prop.description} error={error}>
            {({ id, describedBy, invalid }) =>
              t === 'enum' ? (
                <Select id={id} aria-describedby={describedBy} {...props.register(name)}>
                  {!required.has(key) && <option value="">—</option>}
                  {prop.enum?.map((v) => (
                    <option key={String(v)} value={String(v)}>
                      {String(v)}
                    </option>
                  ))}
                </Select>
              ) : (
                <Input
                  id={id}
                  aria-describedby={describedBy}
                  aria-invalid={invalid}
                  type={props.writeOnly ? 'password' : t === 'integer' || t === 'number' ? 'number' : 'text'}
                  autoComplete={props.writeOnly ? 'new-password' : 'off'}
                  placeholder={
                    props.writeOnly && props.storedSecret
                      ? 'Stored — leave empty to keep'
                      : t === 'json'
                        ? 'JSON'
                        : undefined
                  }
                  {...props.register(name)}
                />
              )
            }
          </Field>
        );
      })}
    </div>
  );
}
