import countries from 'i18n-iso-countries';

// The maintained ISO 3166-1 list (i18n-iso-countries); read once, on the first check.
let alpha2: Set<string> | null = null;

/** Whether `code` is an assigned ISO 3166-1 alpha-2 code, written in capitals. */
export function isCountryCode(code: string): boolean {
  alpha2 ??= new Set(Object.keys(countries.getAlpha2Codes()));
  return alpha2.has(code);
}
