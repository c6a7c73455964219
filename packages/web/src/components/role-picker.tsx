import { useQuery } from '@tanstack/react-query';
import { rolesQuery } from '../lib/queries/roles';
import { Select } from './ui';

/** The organization's roles, built in first; a value no longer listed is still shown. */
export function RolePicker(props: {
  id: string;
  value: string;
  onChange: (v: string) => void;
  org: string;
  label?: string;
}) {
  const roles = useQuery(rolesQuery(props.org));
  return (
    <Select
      id={props.id}
      aria-label={props.label}
      value={props.value}
      onChange={(e) => props.onChange(e.target.value)}
    >
      {!roles.data?.some((r) => r.slug === props.value) && <option value={props.value}>{props.value}</option>}
      {roles.data?.map((r) => (
        <option key={r.slug} value={r.slug}>
          {r.name}
          {r.built_in ? '' : ' (custom)'}
        </option>
      ))}
    </Select>
  );
}
