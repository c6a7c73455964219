import { useQuery } from '@tanstack/react-query';
import { useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { FilterField, SelectFilter } from '../components/list-filter';
import {
  Card,
  CursorPager,
  Empty,
  ErrorNote,
  Input,
  PageHeader,
  tableClass,
  tdClass,
  thClass,
} from '../components/ui';

import { formatTime } from '../lib/format';
import { eventsQuery } from '../lib/queries/events';

const ENTITY_TYPES = [
  'organization',
  'member',
  'member_invitation',
  'role',
  'api_key',
  'data_source',
  'data_source_binding',
  'project',
  'environment',
  'project_environment',
  'query',
  'query_execution',
  'pipeline',
  'pipeline_deployment',
  'pipeline_version',
  'pipeline_run',
  'pipeline_checkpoint',
];
const ACTIONS = [
  'create',
  'update',
  'delete',
  'restore',
  'purge',
  'execute',
  'refresh',
  'test_connection',
  'rotate',
  'revoke',
  'deploy',
  'enable',
  'disable',
  'accept',
  'decline',
  'read',
];
const ACTORS = ['user', 'api_key', 'system', 'external', 'unknown'];

/** An ISO instant as the value of a datetime-local input, in the browser's time zone. */
const toLocalInput = (iso: string) => {
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

function EventList(props: { kind: 'events' | 'audit' }) {
  const { org } = useParams({ from: '/authed/o/$org' });
  const from = props.kind === 'events' ? '/authed/o/$org/events' : '/authed/o/$org/audit';
  const search = useSearch({ from }) as Record<string, string | undefined>;
  const navigate = useNavigate();
  const list = useQuery(eventsQuery(org, props.kind, search));
  const set = (patch: Record<string, string | undefined>) =>
    navigate({
      to: props.kind === 'events' ? '/o/$org/events' : '/o/$org/audit',
      params: { org },
      search: { ...search, cursor: undefined, direction: undefined, ...patch },
    });
  const filter = (id: string, label: string, values: string[]) => (
    <SelectFilter
      id={`ev-${id}`}
      label={label}
      value={search[id]}
      values={values}
      onChange={(v) => set({ [id]: v })}
    />
  );
  // Free-text filters apply on Enter or when the field loses focus, not on every keystroke.
  const text = (id: string, label: string) => (
    <FilterField id={`ev-${id}`} label={label}>
      <Input
        id={`ev-${id}`}
        key={search[id] ?? ''}
        defaultValue={search[id] ?? ''}
        className="w-40"
        onBlur={(e) => e.target.value !== (search[id] ?? '') && set({ [id]: e.target.value || undefined })}
        onKeyDown={(e) => e.key === 'Enter' && set({ [id]: e.currentTarget.value || undefined })}
      />
    </FilterField>
  );
  const when = (id: string, label: string) => (
    <FilterField id={`ev-${id}`} label={label}>
      <Input
        id={`ev-${id}`}
        type="datetime-local"
        className="w-52"
        value={search[id] ? toLocalInput(search[id]) : ''}
        onChange={(e) => set({ [id]: e.target.value ? new Date(e.target.value).toISOString() : undefined })}
      />
    </FilterField>
  );
  return (
    <div>
      <PageHeader
        title={props.kind === 'events' ? 'Events' : 'Security audit'}
        subtitle={
          props.kind === 'events'
            ? 'Everything that changed in the organization.'
            : 'Sign-ins, credentials, permissions and refusals.'
        }
      />
      <div className="mb-3 flex flex-wrap items-end gap-3">
        {filter('entity_type', 'Entity type', ENTITY_TYPES)}
        {text('entity_slug', 'Entity slug')}
        {filter('action', 'Action', ACTIONS)}
        {filter('actor_type', 'Actor type', ACTORS)}
        {text('actor_slug', 'Actor slug')}
        {when('occurred_from', 'From')}
        {when('occurred_before', 'Before')}
      </div>
      <ErrorNote error={list.error} />
      <Card>
        {list.data?.events.length === 0 ? (
          <Empty>No events match these filters.</Empty>
        ) : (
          <table className={tableClass}>
            <thead>
              <tr>
                {['When', 'Actor', 'Action', 'Entity', 'Details'].map((h) => (
                  <th key={h} scope="col" className={thClass}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {list.data?.events.map((e) => (
                <tr key={e.slug} id={e.slug}>
                  <td className={`${tdClass} whitespace-nowrap text-xs`}>{formatTime(e.occurred_at)}</td>
                  <td className={tdClass}>
                    {e.actor_type} <span className="font-mono text-xs">{e.actor_slug}</span>
                  </td>
                  <td className={tdClass}>{e.action}</td>
                  <td className={tdClass}>
                    {e.entity_type} <span className="font-mono text-xs">{e.entity_slug}</span>
                  </td>
                  <td
                    className={`${tdClass} max-w-md truncate font-mono text-xs`}
                    title={JSON.stringify(e.metadata ?? {})}
                  >
                    {JSON.stringify(e.metadata ?? {})}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <CursorPager page={list.data} cursor={search.cursor} go={set} />
      </Card>
    </div>
  );
}

export const EventsScreen = () => <EventList kind="events" />;
export const AuditScreen = () => <EventList kind="audit" />;
