import type { Store } from '../../db/client';

/** An API key's whole standing as one read gives it: see KEYS_SQL. */
export type KeyRow = {
  token_hash: string;
  id: string;
  slug: string;
  organization_id: string;
  role: string;
  can_manage_api_keys: boolean;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  org_slug: string;
  org_name: string;
  event_log_retention_days: number;
  role_permissions: string[] | null;
};

// The key, its organization, and the stored permissions of its role when that is a custom role
// (null for built-in roles, whose permissions are code), for every hash asked for. Raw SQL on a
// named prepared statement: this runs for every API-key request, and the ORM's query building
// and row mapping cost more than the query itself.
const KEYS_SQL = `select k.token_hash, k.id, k.slug, k.organization_id, k.role, k.can_manage_api_keys,
       k.expires_at, k.revoked_at, k.last_used_at,
       o.slug as org_slug, o.name as org_name, o.event_log_retention_days,
       r.permissions as role_permissions
  from api_keys k
  join organizations o on o.id = k.organization_id
  left join roles r on r.organization_id = k.organization_id and r.slug = k.role
 where k.token_hash = any($1::text[])`;

type Waiting = { hash: string; resolve: (row: KeyRow | undefined) => void; reject: (err: unknown) => void };
type Lookups = Pick<Store, 'prepared'>;

/** Per store, the lookups asked for in this turn of the event loop and not yet sent. */
const queued = new WeakMap<Lookups, Waiting[]>();

/**
 * The key whose token hashes to `hash`, or undefined. Never cached: the lookups asked for in one
 * turn of the event loop go to the database together, in one query sent at the end of that turn
 * (under load, the requests that arrived together share a round trip). A lookup only ever joins
 * a query not yet sent, never one already on its way, so every lookup reads after its request
 * arrived: a key revoked before then is refused, on every API host, as with a query of its own.
 */
export function lookupKey(store: Lookups, hash: string): Promise<KeyRow | undefined> {
  return new Promise((resolve, reject) => {
    let batch = queued.get(store);
    if (!batch) {
      batch = [];
      queued.set(store, batch);
      setImmediate(send, store, batch);
    }
    batch.push({ hash, resolve, reject });
  });
}

function send(store: Lookups, batch: Waiting[]) {
  queued.delete(store);
  const hashes = batch.length === 1 ? [batch[0].hash] : [...new Set(batch.map((w) => w.hash))];
  store.prepared('sluice_auth_keys', KEYS_SQL, [hashes]).then(
    ({ rows }) => {
      const byHash = new Map<string, KeyRow>();
      for (const row of rows as KeyRow[]) byHash.set(row.token_hash, row);
      // Requests of the same key share its row (principal.ts touches last_used_at once for them).
      for (const w of batch) w.resolve(byHash.get(w.hash));
    },
    (err) => {
      for (const w of batch) w.reject(err);
    },
  );
}
