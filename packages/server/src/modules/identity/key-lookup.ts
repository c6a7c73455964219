import type { Store } from '../../db/client';
import { keyCacheGeneration } from '../../http/key-cache';

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

type Waiting = {
  hash: string;
  cacheMs: number;
  resolve: (row: KeyRow | undefined) => void;
  reject: (err: unknown) => void;
};
type Lookups = Pick<Store, 'prepared'>;
/** A key row as read, when (monotonic ms, from the moment its query was sent) and under which generation. */
type Kept = { row: KeyRow; at: number; generation: number };

/** Per store, the lookups asked for in this turn of the event loop and not yet sent. */
const queued = new WeakMap<Lookups, Waiting[]>();
/** Per store, the keys read, by token hash (found keys only: an unknown hash is always read). */
const kept = new WeakMap<Lookups, Map<string, Kept>>();
/** More keys than this in memory and the map starts again empty (a bound, not an eviction order). */
const MAX_KEPT = 10_000;

/**
 * The key whose token hashes to `hash`, or undefined.
 *
 * With `cacheMs` > 0 a key read less than `cacheMs` ago (counted from when its query was sent) is
 * served from memory, unless `forgetCachedKeys(store)` has been called since (every change to
 * a key, a custom role or an organization does, after its commit): on this host a revocation,
 * rotation or role change applies to the next request; on another host within `cacheMs`. With 0
 * every lookup reads the store.
 *
 * Reads are batched: the lookups asked for in one turn of the event loop go to the database
 * together, in one query sent at the end of that turn (under load, the requests that arrived
 * together share a round trip). A lookup only ever joins a query not yet sent, never one already
 * on its way, so every lookup that reads reads after its request arrived.
 */
export function lookupKey(store: Lookups, hash: string, cacheMs = 0): Promise<KeyRow | undefined> {
  if (cacheMs > 0) {
    const k = kept.get(store)?.get(hash);
    if (k && k.generation === keyCacheGeneration(store) && performance.now() - k.at < cacheMs) {
      return Promise.resolve(k.row);
    }
  }
  return new Promise((resolve, reject) => {
    let batch = queued.get(store);
    if (!batch) {
      batch = [];
      queued.set(store, batch);
      setImmediate(send, store, batch);
    }
    batch.push({ hash, cacheMs, resolve, reject });
  });
}

function send(store: Lookups, batch: Waiting[]) {
  queued.delete(store);
  const hashes = batch.length === 1 ? [batch[0].hash] : [...new Set(batch.map((w) => w.hash))];
  const at = performance.now();
  const generation = keyCacheGeneration(store);
  store.prepared('sluice_auth_keys', KEYS_SQL, [hashes]).then(
    ({ rows }) => {
      const byHash = new Map<string, KeyRow>();
      for (const row of rows as KeyRow[]) byHash.set(row.token_hash, row);
      // Kept only when no change was committed on this host while the query was on its way.
      if (generation === keyCacheGeneration(store) && batch.some((w) => w.cacheMs > 0)) {
        let mine = kept.get(store);
        if (!mine || mine.size + byHash.size > MAX_KEPT) {
          mine = new Map();
          kept.set(store, mine);
        }
        for (const [hash, row] of byHash) mine.set(hash, { row, at, generation });
      }
      // Requests of the same key share its row (principal.ts touches last_used_at once for them).
      for (const w of batch) w.resolve(byHash.get(w.hash));
    },
    (err) => {
      for (const w of batch) w.reject(err);
    },
  );
}
