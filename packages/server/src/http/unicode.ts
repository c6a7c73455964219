import type { ValidationIssue } from './errors';

// JSON can carry a lone UTF-16 surrogate (`"\ud800"`). It is not Unicode text: PostgreSQL
// refuses it inside jsonb (event metadata, configs), and the error surfaced as a 500 far from
// the field. Request bodies are checked once, in the single pass over their text that also
// enforces the body limits (json-body.ts), and the first offending field named.

export function loneSurrogateIssue(path: string): ValidationIssue {
  return {
    path,
    code: 'invalid_unicode',
    message: 'text must be valid Unicode: a lone UTF-16 surrogate (\\ud800-\\udfff) is not a character',
  };
}
