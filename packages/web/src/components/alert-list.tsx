import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { formatTime } from '../lib/format';
import { AlertsNav } from './alerts-nav';
import { ConfirmButton } from './confirm';
import { Badge, Card, CursorPager, Empty, ErrorNote, PageHeader, tableClass, tdClass, thClass } from './ui';

// What the alert destinations and alert policies screens share: a paged table of named,
// enabled-or-not items with a "New …" link, its empty state, and deletion from the row.

export const linkClass = 'text-blue-700 hover:underline dark:text-blue-300';

type ListRoute = '/o/$org/alerts/destinations' | '/o/$org/alerts/policies';
type CursorPage = { has_more: boolean; next_cursor: string | null; prev_cursor: string | null };

/** Back to a list's first page. */
export function useToList(org: string, list: ListRoute) {
  const navigate = useNavigate();
  return () => navigate({ to: list, params: { org }, search: {} });
}

/** Deletes an item by slug, then refetches the lists under `queryKey`. */
export function useRemove(remove: (slug: string) => Promise<unknown>, queryKey: readonly unknown[]) {
  const qc = useQueryClient();
  return useMutation({ mutationFn: remove, onSuccess: () => qc.invalidateQueries({ queryKey }) });
}

/** A list screen: nav, header with its "New …" link, notes and errors, the table or its empty state, the pager. */
export function AlertListPage<T>(props: {
  org: string;
  list: ListRoute;
  title: string;
  subtitle: string;
  newLabel: string;
  /** Shown above the errors (e.g. the result of a test message). */
  notes?: ReactNode;
  error: unknown;
  /** The empty state, around its "Create one" link. */
  emptyBefore: string;
  emptyAfter: string;
  caption: string;
  headers: string[];
  page: CursorPage | undefined;
  rows: T[];
  cursor: string | undefined;
  row: (item: T) => ReactNode;
}) {
  const { org, list } = props;
  const navigate = useNavigate();
  const newTo = `${list}/new` as `${ListRoute}/new`;
  return (
    <div className="max-w-6xl">
      <AlertsNav org={org} />
      <PageHeader
        title={props.title}
        subtitle={props.subtitle}
        actions={
          <Link to={newTo} params={{ org }} className={`${linkClass} text-sm`}>
            {props.newLabel}
          </Link>
        }
      />
      <div className="mb-3 space-y-2">
        {props.notes}
        <ErrorNote error={props.error} />
      </div>
      <Card>
        {props.page && props.rows.length === 0 ? (
          <Empty>
            {props.emptyBefore}{' '}
            <Link to={newTo} params={{ org }} className={linkClass}>
              Create one
            </Link>
            {props.emptyAfter}
          </Empty>
        ) : (
          <table className={tableClass}>
            <caption className="sr-only">{props.caption}</caption>
            <thead>
              <tr>
                {props.headers.map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>{props.rows.map(props.row)}</tbody>
          </table>
        )}
        <CursorPager
          page={props.page}
          cursor={props.cursor}
          go={(to) =>
            navigate({ to: list, params: { org }, search: { cursor: to.cursor, direction: to.direction } })
          }
        />
      </Card>
    </div>
  );
}

/** The first cell of a row: the item's name, linking to it, over its slug. */
export function NameCell(props: {
  org: string;
  to: '/o/$org/alerts/destinations/$slug' | '/o/$org/alerts/policies/$slug';
  slug: string;
  name: string;
}) {
  return (
    <td className={tdClass}>
      <Link to={props.to} params={{ org: props.org, slug: props.slug }} className={linkClass}>
        {props.name}
      </Link>
      <div className="font-mono text-xs text-slate-600 dark:text-slate-400">{props.slug}</div>
    </td>
  );
}

/** The status and "Updated" cells of a row. */
export function StatusCells({ enabled, updatedAt }: { enabled: boolean; updatedAt: string }) {
  return (
    <>
      <td className={tdClass}>
        <Badge tone={enabled ? 'green' : 'slate'}>{enabled ? 'enabled' : 'disabled'}</Badge>
      </td>
      <td className={`${tdClass} whitespace-nowrap text-xs`}>{formatTime(updatedAt)}</td>
    </>
  );
}

/** A row's delete button, confirmed first; `children` say what the deletion does. */
export function DeleteButton(props: {
  noun: string;
  name: string;
  onConfirm: () => void;
  children: ReactNode;
}) {
  return (
    <ConfirmButton
      label="Delete"
      ariaLabel={`Delete ${props.name}`}
      title={`Delete the ${props.noun} ${props.name}?`}
      confirmLabel={`Delete ${props.noun}`}
      onConfirm={props.onConfirm}
    >
      {props.children}
    </ConfirmButton>
  );
}
