import { createRequire } from 'node:module';

// The maintained ISO 3166-1 list (i18n-iso-countries); loaded and read once, on the first check
// (a process that never sees an address never holds it: docs/benchmarks.md, Memory).
let alpha2: Set<string> | null = null;

/** Whether `code` is an assigned ISO 3166-1 alpha-2 code, written in capitals. */
export function isCountryCode(code: string): boolean {
  if (!alpha2) {
    const countries: typeof import('i18n-iso-countries') = createRequire(import.meta.url)(
      'i18n-iso-countries',
    );
    alpha2 = new Set(Object.keys(countries.getAlpha2Codes()));
  }
  return alpha2.has(code);
}
