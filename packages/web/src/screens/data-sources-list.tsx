import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import {
  Badge,
  Card,
  Empty,
  ErrorNote,
  PageHeader,
  Pager,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';

import { formatTime } from '../lib/format';
import { dataSourcesQuery } from '../lib/queries/data-sources';

export function DataSourcesList() {
  const { org } = useParams({ from: '/authed/o/$org' });
  const search = useSearch({ from: '/authed/o/$org/data-sources' });
  const navigate = useNavigate({ from: '/o/$org/data-sources' });
  const list = useQuery(dataSourcesQuery(org, search));
  return (
    <div>
      <PageHeader
        title="Data sources"
        actions={
          <Link
            to="/o/$org/data-sources/new"
            params={{ org }}
            search={{}}
            className="rounded-md bg-blue-600 px-3 py-1.5 text-sm font-medium text-white hover:bg-blue-700 dark:bg-blue-500 dark:text-slate-950"
          >
            New data source
          </Link>
        }
      />
      <ErrorNote error={list.error} />
      <Card>
        {list.data?.data_sources.length === 0 ? (
          <Empty>No data sources yet.</Empty>
        ) : (
          <table className={tableClass}>
            <thead>
              <tr>
                {['Name', 'Type', 'Connection', 'Schema', 'Updated'].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {list.data?.data_sources.map((d) => (
                <tr key={d.slug}>
                  <td className={tdClass}>
                    <Link
                      to="/o/$org/data-sources/$ds"
                      params={{ org, ds: d.slug }}
                      search={{}}
                      className="font-medium text-blue-700 hover:underline dark:text-blue-300"
                    >
                      {d.name}
                    </Link>
                  </td>
                  <td className={tdClass}>{d.type}</td>
                  <td className={tdClass}>
                    {d.last_tested_at === null ? (
                      <Badge>not tested</Badge>
                    ) : d.test_error ? (
                      <Badge tone="red">failing</Badge>
                    ) : (
                      <Badge tone="green">ok</Badge>
                    )}
                  </td>
                  <td className={tdClass}>{d.schema_status}</td>
                  <td className={tdClass}>{formatTime(d.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {list.data && (
          <Pager
            hasMore={list.data.has_more}
            hasPrev={Boolean(search.cursor)}
            onNext={() =>
              navigate({ search: { cursor: list.data.next_cursor ?? undefined, direction: 'next' } })
            }
            onPrev={() =>
              navigate({ search: { cursor: list.data.prev_cursor ?? undefined, direction: 'prev' } })
            }
          />
        )}
      </Card>
    </div>
  );
}
