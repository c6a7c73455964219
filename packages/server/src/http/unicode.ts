import type { ValidationIssue } from './errors';

// JSON can carry a lone UTF-16 surrogate (`"\ud800"`). It is not Unicode text: PostgreSQL
// refuses it inside jsonb (event metadata, configs), and the error surfaced as a 500 far from
// the field. Request bodies are checked once, as parsed, and the first offending field named.

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = (s: string) => !LONE.test(s);

/** The path of the first string or key holding a lone surrogate, or null. Iterative: deep nesting is fine. */
export function loneSurrogatePath(value: unknown): string | null {
  const stack: { v: unknown; path: string[] }[] = [{ v: value, path: [] }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (!wellFormed(v)) return path.join('.') || '(body)';
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: [...path, String(i)] });
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        if (!wellFormed(k)) return [...path, k.replace(new RegExp(LONE, 'g'), '\uFFFD')].join('.');
        stack.push({ v: child, path: [...path, k] });
      }
    }
  }
  return null;
}

export function loneSurrogateIssue(path: string): ValidationIssue {
  return {
    path,
    code: 'invalid_unicode',
    message: 'text must be valid Unicode: a lone UTF-16 surrogate (\\ud800-\\udfff) is not a character',
  };
}
