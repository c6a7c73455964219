import countries from 'i18n-iso-countries';
import { forwardRef, type SelectHTMLAttributes } from 'react';
import { Select } from './ui';

// The codes come from the same maintained ISO 3166-1 list the server validates against
// (i18n-iso-countries); the names from the browser's own Intl data, in the reader's language.
const names = new Intl.DisplayNames(undefined, { type: 'region' });
export const COUNTRY_CODES = new Set(Object.keys(countries.getAlpha2Codes()));
const options = [...COUNTRY_CODES]
  .map((code) => ({ code, name: names.of(code) ?? code }))
  .sort((a, b) => a.name.localeCompare(b.name));

export const CountrySelect = forwardRef<HTMLSelectElement, SelectHTMLAttributes<HTMLSelectElement>>(
  function CountrySelect(props, ref) {
    return (
      <Select ref={ref} {...props}>
        <option value="">Choose a country</option>
        {options.map((o) => (
          <option key={o.code} value={o.code}>
            {o.name} ({o.code})
          </option>
        ))}
      </Select>
    );
  },
);
