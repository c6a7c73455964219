// What an API host may keep of the API keys it has read (modules/identity/key-lookup.ts), and the
// switch that drops all of it: the services that change a key, a custom role or an organization
// wrap their transaction in `forgettingKeys`, so the next request on every API host of this store
// handle (the API host and the app host of one process share it) reads its key again. Hosts with
// a store handle of their own (other processes, other machines) keep what they read for at most
// their SLUICE_API_KEY_CACHE_MS (docs/operations.md#api-key-cache).

const generations = new WeakMap<object, number>();

/** Bumped by every forget: a key read under an older generation is not served from memory. */
export function keyCacheGeneration(store: object): number {
  return generations.get(store) ?? 0;
}

/** Call after a commit that changed api_keys, roles or organizations through `store`. */
export function forgetCachedKeys(store: object): void {
  generations.set(store, keyCacheGeneration(store) + 1);
}

/** `forgetCachedKeys(store)` once `committed` settles (a transaction that changes what a key read holds). */
export async function forgettingKeys<T>(store: object, committed: Promise<T>): Promise<T> {
  try {
    return await committed;
  } finally {
    forgetCachedKeys(store);
  }
}
