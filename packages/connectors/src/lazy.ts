/**
 * A connector function whose module loads on its first call: a process loads a connector's
 * operations, sources, sinks and their drivers only once a data source of that kind is used, not
 * with the registry (an idle `sluice serve` holds none of them, docs/benchmarks.md, Memory).
 * Every capability returns a promise, so the caller sees no difference.
 */
export function onFirstCall<M, K extends keyof M>(load: () => Promise<M>, name: K): M[K] {
  return (async (...args: unknown[]) => {
    const fn = (await load())[name] as (...a: unknown[]) => unknown;
    return fn(...args);
  }) as M[K];
}
