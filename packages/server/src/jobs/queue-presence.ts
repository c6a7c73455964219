// Which workers are about, and which one answers a job's announcement (jobs/queue.ts; the
// payloads are described at JOBS_CHANNEL in queue-sql.ts).
import crypto from 'node:crypto';
import type { SqlExecutor } from '../db/client';
import { JOBS_CHANNEL } from './queue-sql';

/** How long other workers seen (saying `here`) count as present. */
const PEER_WINDOW_MS = 60_000;
/** How often a listening worker says `here`, well within PEER_WINDOW_MS. */
const PRESENCE_MS = 20_000;

export type Presence = ReturnType<typeof workerPresence>;

/**
 * This worker's name in presence notifications and job announcements, the other workers present,
 * and this process's announcements so far. `active`: whether it listens and is not stopping (only
 * then does it say `here`).
 */
export function workerPresence(db: SqlExecutor, active: () => boolean) {
  const tag = crypto.randomUUID().slice(0, 8);
  const peers = new Map<string, number>();
  // This process's announcements so far (`insertion`, `enqueue`): their sequence number.
  let announcements = 0;
  const peersAbout = () => {
    const now = Date.now();
    for (const [t, at] of peers) if (now - at > PEER_WINDOW_MS) peers.delete(t);
    return peers.size;
  };
  // Presence costs a NOTIFY per worker every PRESENCE_MS, none per job; sent without waiting
  // for a WAL flush (nothing is written), and lost without harm (the next one comes).
  const announce = (word: 'here' | 'bye') =>
    db
      .executeSql(`select set_config('synchronous_commit', 'off', true), pg_notify($1, $2)`, [
        JOBS_CHANNEL,
        `${word}:${tag}`,
      ])
      .then(
        () => {},
        () => {},
      );
  const sayHere = () => {
    if (active()) void announce('here');
  };
  const timer = setInterval(sayHere, PRESENCE_MS);
  timer.unref();
  return {
    tag,
    peersAbout,
    sayHere,
    /**
     * Whether the announcement with sequence number `seq` names this worker: the same one in every
     * worker's view once they have heard each other's `here` (every worker consumes the same
     * queues, jobs/worker.ts). Views that differ for a moment (a worker starting or gone) make two
     * workers answer (one fetch finds nothing) or none at once (the ready check finds the job).
     */
    named(seq: number) {
      if (peersAbout() === 0) return true;
      const order = [tag, ...peers.keys()].sort();
      return order[seq % order.length] === tag;
    },
    /** The payload announcing a new job of `name`; sent inside a caller's transaction: by `-`. */
    announcement(name: string, inCallersTx = false) {
      return `${name}:1:${inCallersTx ? '-' : tag}:${announcements++}`;
    },
    /** Takes a `here:` or `bye:` payload (true), or leaves any other to the caller (false). */
    heard(payload: string): boolean {
      if (!payload.startsWith('here:') && !payload.startsWith('bye:')) return false;
      const [kind, by] = payload.split(':');
      if (by === tag) return true;
      if (kind === 'bye') {
        peers.delete(by!);
        return true;
      }
      const known = peers.has(by!);
      peers.set(by!, Date.now());
      // A worker heard for the first time may not know of this one yet.
      if (!known) sayHere();
      return true;
    },
    /** Stops saying `here`; says `bye` when it was listening. */
    async leave(listening: boolean) {
      clearInterval(timer);
      if (listening) await announce('bye');
    },
  };
}
