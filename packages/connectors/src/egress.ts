import dns from 'node:dns';
import { createRequire } from 'node:module';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Agent } from 'undici';

// The SSRF guard (docs/operations.md#deployment-mode). Every connector resolves and checks every
// address it connects to through here: after DNS resolution, on every redirect hop (each hop opens
// its connection through the same guarded connector), and it connects to the very address it
// checked, so a DNS answer that changes between check and connect cannot slip through.

export type LookupAll = (host: string) => Promise<{ address: string; family: number }[]>;

export type EgressPolicy = {
  /** Loopback, private, link-local and unique-local targets; never in hosted deployments. */
  allowPrivate: boolean;
  /** Private CIDRs reachable even without allowPrivate (self-hosted operators' allowlist). */
  allowCidrs?: readonly string[];
  /** The resolver; the system's (getaddrinfo, honours /etc/hosts) unless another is given. */
  lookup?: LookupAll;
};

const systemLookup: LookupAll = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

export class EgressBlockedError extends Error {
  readonly code = 'PRIVATE_HOST_BLOCKED';
  constructor(readonly host: string) {
    super(
      `connections to ${host} are blocked: it is a loopback, private, link-local or reserved address` +
        ' (a self-hosted deployment can allow private hosts with allow_private_hosts: true)',
    );
  }
}

/** hosted: never private; self_hosted: only when the data source opts in. */
export function egressPolicy(
  deployment: 'hosted' | 'self_hosted',
  allowPrivateHosts: boolean | undefined,
  allowCidrs: readonly string[] = [],
): EgressPolicy {
  const selfHosted = deployment === 'self_hosted';
  return { allowPrivate: selfHosted && allowPrivateHosts === true, allowCidrs: selfHosted ? allowCidrs : [] };
}

// Cloud metadata and credential endpoints stay closed even where private hosts are allowed:
// AWS/GCP/Azure IMDS, the AWS IPv6 IMDS, Alibaba, Azure's WireServer (a public address!),
// the ECS task credentials endpoint and the EKS Pod Identity agent (IPv4 and IPv6).
const METADATA = new Set([
  '169.254.169.254',
  'fd00:ec2::254',
  '100.100.100.200',
  '168.63.129.16',
  '169.254.170.2',
  '169.254.170.23',
  'fd00:ec2::23',
]);
const PRIVATE_RANGES = new Set(['loopback', 'private', 'linkLocal', 'uniqueLocal', 'carrierGradeNat']);

/** `public` may always be reached, `private` only by policy, `forbidden` never. */
export function classifyAddress(address: string): 'public' | 'private' | 'forbidden' {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // process() also turns ::ffff:a.b.c.d into a.b.c.d, so mapped forms are judged as IPv4.
    parsed = ipaddr.process(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return 'forbidden';
  }
  const normal = parsed.toString();
  if (METADATA.has(normal)) return 'forbidden';
  // IPv4-compatible IPv6 (::a.b.c.d, deprecated by RFC 4291) is 'unicast' to ipaddr.js but some
  // stacks route it to the embedded IPv4 address (::a9fe:a9fe is the metadata service): never.
  if (parsed.kind() === 'ipv6' && isIpv4Compatible(parsed as ipaddr.IPv6)) return 'forbidden';
  const range = parsed.range();
  if (range === 'unicast') return 'public';
  if (PRIVATE_RANGES.has(range)) return 'private';
  return 'forbidden';
}

function isIpv4Compatible(v6: ipaddr.IPv6): boolean {
  // ::/96 apart from :: and ::1 (ipaddr.js ranges those as unspecified and loopback).
  const p = v6.parts;
  return p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7] > 1);
}

function inAllowlist(address: string, cidrs: readonly string[]): boolean {
  if (cidrs.length === 0) return false;
  const ip = ipaddr.process(address.replace(/^\[|\]$/g, ''));
  return cidrs.some((c) => {
    const [net, bits] = ipaddr.parseCIDR(c);
    const candidate =
      net.kind() === 'ipv6' && ip.kind() === 'ipv4' ? (ip as ipaddr.IPv4).toIPv4MappedAddress() : ip;
    return candidate.kind() === net.kind() && candidate.match(net, bits);
  });
}

export function assertAddressAllowed(address: string, policy: EgressPolicy, host = address): void {
  const kind = classifyAddress(address);
  if (kind === 'public') return;
  if (kind === 'private' && (policy.allowPrivate || inAllowlist(address, policy.allowCidrs ?? []))) return;
  throw new EgressBlockedError(host);
}

/** True for IP literals in any notation getaddrinfo accepts (decimal, octal, hex, short forms). */
function literalAddress(host: string): string | null {
  const bare = host.replace(/^\[|\]$/g, '');
  if (net.isIP(bare)) return bare;
  if (/^[0-9a-fx.]+$/i.test(bare) && !/^[a-f]/i.test(bare) && ipaddr.isValid(bare)) {
    try {
      return ipaddr.parse(bare).toString();
    } catch {
      return null;
    }
  }
  return null;
}

export type ResolvedAddress = { address: string; family: 4 | 6 };

/**
 * Resolves `host` and checks every answer; returns the address to connect to. Connecting to
 * this address (not the name again) is what defeats DNS rebinding.
 */
export async function resolveAllowed(host: string, policy: EgressPolicy): Promise<ResolvedAddress> {
  const literal = literalAddress(host);
  if (literal) {
    assertAddressAllowed(literal, policy, host);
    const v = ipaddr.process(literal);
    return { address: v.toString(), family: v.kind() === 'ipv4' ? 4 : 6 };
  }
  if (!host || /[\s/@]/.test(host)) throw new EgressBlockedError(host || '(empty host)');
  const answers = await (policy.lookup ?? systemLookup)(host);
  if (answers.length === 0)
    throw Object.assign(new Error(`host ${host} did not resolve`), { code: 'ENOTFOUND' });
  // Any blocked answer blocks the name: a name that can point inside is not a public host.
  for (const a of answers) assertAddressAllowed(a.address, policy, host);
  const first = answers[0];
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/** A `lookup` for net/tls.connect that resolves through the guard. */
export function guardedLookup(policy: EgressPolicy) {
  return (hostname: string, options: dns.LookupOptions | LookupCallback, callback?: LookupCallback) => {
    const cb = (typeof options === 'function' ? options : callback) as LookupCallback;
    const all = typeof options === 'object' && options?.all === true;
    resolveAllowed(hostname, policy).then(
      (r) => (all ? cb(null, [{ address: r.address, family: r.family }]) : cb(null, r.address, r.family)),
      (err) => cb(err, ''),
    );
  };
}

type Undici = typeof import('undici');

/** undici's `request`, with the dispatcher it goes through always named. */
type Request = (
  url: string | URL,
  opts: Omit<NonNullable<Parameters<Undici['request']>[1]>, 'dispatcher'> & { dispatcher: Agent },
) => ReturnType<Undici['request']>;

/** The parts of undici that outbound HTTP uses here. */
export type OutboundHttp = {
  Agent: Undici['Agent'];
  buildConnector: Undici['buildConnector'];
  request: Request;
};

let outbound: OutboundHttp | undefined;

/**
 * undici's agent, connector and `request`, loaded on the first outbound HTTP request rather than
 * with every process that could make one, and only those modules: undici's index loads every
 * part of it (fetch, WebSocket, caches, mocks, proxies), 4.6 MB of heap against 1.6 MB for these,
 * kept for good by a `serve` once its first HTTP run has gone (docs/benchmarks.md, Memory).
 * `request` is the index's own: the URL parsed by undici's `parseURL` and split into origin and
 * path, the method PUT when there is a body and none was named, GET otherwise. The paths are
 * undici's own files (its package declares no exports map); the HTTP connector's tests go through
 * them.
 */
export function undici(): OutboundHttp {
  if (outbound) return outbound;
  const load = createRequire(import.meta.url);
  const apiRequest = load('undici/lib/api/api-request.js');
  const { parseURL } = load('undici/lib/core/util.js');
  outbound = {
    Agent: load('undici/lib/dispatcher/agent.js'),
    buildConnector: load('undici/lib/core/connect.js'),
    request: (input, opts) => {
      const url: URL = parseURL(input);
      return apiRequest.call(opts.dispatcher, {
        ...opts,
        origin: url.origin,
        path: url.search ? `${url.pathname}${url.search}` : url.pathname,
        method: opts.method || (opts.body ? 'PUT' : 'GET'),
      });
    },
  };
  return outbound;
}

/**
 * An undici dispatcher whose every connection (first request and each redirect hop) is
 * checked. IP-literal hosts skip DNS in net.connect, so they are checked here explicitly.
 */
export function guardedDispatcher(
  policy: EgressPolicy,
  opts: { connectTimeoutMs?: number; ca?: string | Buffer; answerTimeoutMs?: number } = {},
): Agent {
  const u = undici();
  const base = u.buildConnector({
    timeout: opts.connectTimeoutMs ?? 10_000,
    lookup: guardedLookup(policy) as any,
    ...(opts.ca ? { ca: opts.ca } : {}),
  } as any);
  return new u.Agent({
    // undici's own default is 300 s for the headers and between body chunks.
    ...(opts.answerTimeoutMs
      ? { headersTimeout: opts.answerTimeoutMs, bodyTimeout: opts.answerTimeoutMs }
      : {}),
    connect: (options, callback) => {
      const literal = literalAddress(options.hostname);
      if (literal) {
        try {
          assertAddressAllowed(literal, policy, options.hostname);
        } catch (err) {
          callback(err as Error, null);
          return;
        }
      }
      base(options, callback);
    },
  });
}
