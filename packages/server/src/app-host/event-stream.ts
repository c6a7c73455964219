import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps, Principal } from '../context';
import { userOf } from '../http/auth';
import { AppError } from '../http/errors';
import { sessionStanding } from '../modules/identity/index';
import { resolveScope } from '../modules/organizations/index';
import type { Permission } from '../permissions';

/**
 * Why the server ended a stream: the data of its last event, `end` (docs/operations.md "Event
 * streams on the app host"). The app closes its EventSource on `end` instead of reconnecting.
 */
export type EndReason =
  /** Signed out on this app host (or signed in again over the session): ended at once. */
  | 'signed_out'
  /** Found deleted by a re-check: signed out on another app host, password changed, account deleted. */
  | 'session_ended'
  | 'session_expired'
  | 'access_revoked'
  | 'run_finished'
  | 'shutting_down';

type OpenStream = { sessionId: string; userId: string; end(reason: EndReason): void };

export type StreamRegistry = ReturnType<typeof streamRegistry>;

/**
 * The event streams open on this app host, by session and by user: it caps how many each may hold
 * and lets sign-out end a session's streams at once. Other app hosts learn of a sign-out from
 * their own re-check (docs/operations.md "Event streams on the app host").
 */
export function streamRegistry(caps: { perSession: number; perUser: number; recheckMs: number }) {
  const bySession = new Map<string, Set<OpenStream>>();
  const byUser = new Map<string, Set<OpenStream>>();
  const put = (m: Map<string, Set<OpenStream>>, key: string, s: OpenStream) => {
    const set = m.get(key) ?? new Set<OpenStream>();
    set.add(s);
    m.set(key, set);
  };
  const drop = (m: Map<string, Set<OpenStream>>, key: string, s: OpenStream) => {
    const set = m.get(key);
    set?.delete(s);
    if (set?.size === 0) m.delete(key);
  };
  const full = (what: string, cap: number) =>
    new AppError('RATE_LIMITED', `at most ${cap} event streams may be open per ${what}; close one first`, {
      headers: { 'retry-after': String(Math.max(1, Math.ceil(caps.recheckMs / 1000))) },
    });
  return {
    /** Takes a slot for a new stream (429 when its session or user holds all theirs); returns its release. */
    admit(s: OpenStream): () => void {
      if ((bySession.get(s.sessionId)?.size ?? 0) >= caps.perSession) throw full('session', caps.perSession);
      if ((byUser.get(s.userId)?.size ?? 0) >= caps.perUser) throw full('user', caps.perUser);
      put(bySession, s.sessionId, s);
      put(byUser, s.userId, s);
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        drop(bySession, s.sessionId, s);
        drop(byUser, s.userId, s);
      };
    },
    endSession(sessionId: string, reason: EndReason) {
      for (const s of [...(bySession.get(sessionId) ?? [])]) s.end(reason);
    },
    endAll(reason: EndReason) {
      for (const set of [...bySession.values()]) for (const s of [...set]) s.end(reason);
    },
  };
}

type UserPrincipal = Extract<Principal, { type: 'user' }>;

/** Null while the session lasts and its user still holds the permission in the organization. */
async function standingOf(
  deps: Deps,
  principal: UserPrincipal,
  orgSlug: string,
  permission: Permission,
): Promise<EndReason | null> {
  // On the app host the principal's token is the session (bff.ts).
  const session = await sessionStanding(deps.db, principal.tokenId);
  if (!session) return 'session_ended';
  if (session.expired) return 'session_expired';
  const scope = await resolveScope(deps.db, principal, orgSlug);
  if (!scope?.permissions.has(permission)) return 'access_revoked';
  return null;
}

export type EventStream = {
  /**
   * Re-checks the session and access first and writes the event only when both still hold;
   * otherwise the stream has ended (with its reason) and this answers false.
   */
  send(event: string, data: unknown, id?: string | number): Promise<boolean>;
  /** Waits, or less when the stream ends meanwhile. */
  sleep(ms: number): Promise<void>;
  /** Sends `end` with the reason (and details) and closes. */
  end(reason: EndReason, details?: Record<string, unknown>): void;
  /** Closes without a last event: the browser reconnects (after an error). */
  close(): void;
  isOpen(): boolean;
};

/**
 * Opens a server-sent-event stream on an organization's resource, for a request that already
 * passed the permission check. It takes a slot of the session's and user's caps (429 past them,
 * before anything is written) and re-checks the session and the permission before every event
 * and every `recheckMs` besides, ending with `end` and the reason once either is gone.
 */
export function openEventStream(
  req: FastifyRequest,
  reply: FastifyReply,
  opts: { deps: Deps; registry: StreamRegistry; orgSlug: string; permission: Permission },
): EventStream {
  const { deps, registry, orgSlug, permission } = opts;
  const principal = userOf(req);
  let open = true;
  let timer: NodeJS.Timeout | undefined;
  const sleepers = new Set<() => void>();
  const write = (event: string, data: unknown, id?: string | number) =>
    reply.raw.write(
      `${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`,
    );
  const close = () => {
    if (!open) return;
    open = false;
    clearInterval(timer);
    release();
    reply.raw.end();
    for (const wake of sleepers) wake();
  };
  const end = (reason: EndReason, details: Record<string, unknown> = {}) => {
    if (!open) return;
    write('end', { reason, ...details });
    close();
  };
  // Throws 429 when the caps are reached: the stream has not started, so the answer is the wrapper.
  const release = registry.admit({ sessionId: principal.tokenId, userId: principal.userId, end });

  reply.hijack();
  reply.raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': req.id,
  });
  // The browser went away: free the slot and stop polling.
  reply.raw.on('close', close);
  req.raw.on('close', close);

  const verify = async () => {
    const why = await standingOf(deps, principal, orgSlug, permission);
    if (why) end(why);
    return open;
  };
  let checking = false;
  timer = setInterval(() => {
    if (checking || !open) return;
    checking = true;
    verify()
      .catch((err) => {
        req.log.warn({ err }, 'event stream re-check failed');
        close();
      })
      .finally(() => {
        checking = false;
      });
  }, deps.config.streams.recheckMs);
  timer.unref();

  return {
    async send(event, data, id) {
      if (!open || !(await verify())) return false;
      write(event, data, id);
      return true;
    },
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        if (!open) return resolve();
        const wake = () => {
          clearTimeout(t);
          sleepers.delete(wake);
          resolve();
        };
        const t = setTimeout(wake, ms);
        sleepers.add(wake);
      }),
    end,
    close,
    isOpen: () => open,
  };
}
