// `{{name}}` templates in statements. Rendering never builds JSON or SQL by string
// concatenation: a string that is exactly one template becomes that value (any JSON type), a
// template inside a longer string is replaced by the value's text.

const TEMPLATE = /\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}/g;
const WHOLE = /^\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}$/;

export type TemplateRef = { name: string; path(prefix: string): string };

/** Every template used in a JSON value, with where it sits. */
export function templateRefs(value: unknown, at: (string | number)[] = []): TemplateRef[] {
  const out: TemplateRef[] = [];
  const walk = (v: unknown, p: (string | number)[]) => {
    if (typeof v === 'string') {
      for (const m of v.matchAll(TEMPLATE)) {
        const segs = [...p];
        out.push({
          name: m[1],
          path: (prefix) =>
            [prefix, ...segs.map((s) => (typeof s === 'number' ? `[${s}]` : s))]
              .join('.')
              .replace(/\.\[/g, '['),
        });
      }
    } else if (Array.isArray(v))
      v.forEach((x, i) => {
        walk(x, [...p, i]);
      });
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, [...p, k]);
  };
  walk(value, at);
  return out;
}

export class TemplateError extends Error {
  constructor(readonly template: string) {
    super(`template {{${template}}} has no value`);
  }
}

export type Resolve = (name: string) => { found: true; value: unknown } | { found: false };

const asText = (v: unknown) =>
  typeof v === 'string'
    ? v
    : v === null || v === undefined
      ? ''
      : typeof v === 'object'
        ? JSON.stringify(v)
        : String(v);

/** Renders a string: a whole-string template keeps the value's type; inline ones become text. */
export function renderString(
  s: string,
  resolve: Resolve,
  encode: (text: string) => string = (t) => t,
): unknown {
  const whole = WHOLE.exec(s);
  if (whole) {
    const r = resolve(whole[1]);
    if (!r.found) throw new TemplateError(whole[1]);
    return r.value;
  }
  return s.replace(TEMPLATE, (_m, name: string) => {
    const r = resolve(name);
    if (!r.found) throw new TemplateError(name);
    return encode(asText(r.value));
  });
}

/** Renders every string of a JSON value. */
export function renderValue(v: unknown, resolve: Resolve): unknown {
  if (typeof v === 'string') return renderString(v, resolve);
  if (Array.isArray(v)) return v.map((x) => renderValue(x, resolve));
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, renderValue(x, resolve)]));
  return v;
}

/** A resolver over nested namespaces: `runtime.env.REGION` looks up scope.runtime.env.REGION. */
export function scopeResolver(scope: Record<string, unknown>): Resolve {
  return (name) => {
    let cur: unknown = scope;
    for (const part of name.split('.')) {
      if (!cur || typeof cur !== 'object' || !Object.hasOwn(cur, part)) return { found: false };
      cur = (cur as Record<string, unknown>)[part];
    }
    return { found: true, value: cur };
  };
}
