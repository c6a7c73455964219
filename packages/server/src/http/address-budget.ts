import { AppError } from './errors';

/**
 * The per-address budget for requests that have not proven who they are
 * (docs/operations.md#rate-limits-and-bounds): no bearer token, or one that did not resolve. It
 * runs inside the authentication hook, before the token lookup, so neither a flood of anonymous
 * requests nor a stream of invented tokens (a valid checksum costs nothing to compute) is answered
 * 401 forever, and an address over its budget costs no database lookup at all. Fixed windows, kept
 * in process like the per-token counters.
 */
export type AddressBudget = {
  /** Counts one unauthenticated request; throws RATE_LIMITED once the window's budget is spent. */
  spend(address: string): void;
  /** Throws RATE_LIMITED when the address has nothing left, without counting. */
  check(address: string): void;
  /** Tokens that resolved recently skip check(): a noisy neighbour behind one proxy address does not lock out known clients. */
  knownToken(hash: string): boolean;
  rememberToken(hash: string): void;
};

const MAX_TRACKED = 50_000;

export function addressBudget(opts: { max: number; windowMs: number; now?: () => number }): AddressBudget {
  const now = opts.now ?? Date.now;
  const counts = new Map<string, { used: number; resetAt: number }>();
  const known = new Map<string, number>();
  let sweepAt = 0;

  function sweep(t: number) {
    if (t < sweepAt && counts.size < MAX_TRACKED) return;
    sweepAt = t + opts.windowMs;
    for (const [k, v] of counts) if (v.resetAt <= t) counts.delete(k);
    for (const [k, until] of known) if (until <= t) known.delete(k);
    // Still too many (a spray of source addresses): forget the oldest, never grow without bound.
    for (const k of counts.keys()) {
      if (counts.size < MAX_TRACKED) break;
      counts.delete(k);
    }
  }

  function entry(address: string) {
    const t = now();
    sweep(t);
    let e = counts.get(address);
    if (!e || e.resetAt <= t) {
      e = { used: 0, resetAt: t + opts.windowMs };
      counts.set(address, e);
    }
    return { e, t };
  }

  function limited(resetAt: number, t: number): AppError {
    const retry = Math.max(1, Math.ceil((resetAt - t) / 1000));
    return new AppError(
      'RATE_LIMITED',
      `rate limit of ${opts.max} unauthenticated requests exceeded; retry in ${retry} s`,
      {
        headers: {
          'retry-after': String(retry),
          'ratelimit-limit': String(opts.max),
          'ratelimit-remaining': '0',
          'ratelimit-reset': String(retry),
        },
      },
    );
  }

  return {
    spend(address) {
      const { e, t } = entry(address);
      if (e.used >= opts.max) throw limited(e.resetAt, t);
      e.used++;
    },
    check(address) {
      const { e, t } = entry(address);
      if (e.used >= opts.max) throw limited(e.resetAt, t);
    },
    knownToken(hash) {
      const until = known.get(hash);
      return until !== undefined && until > now();
    },
    rememberToken(hash) {
      known.delete(hash);
      if (known.size >= MAX_TRACKED) known.delete(known.keys().next().value as string);
      known.set(hash, now() + opts.windowMs);
    },
  };
}
