import type { SessionPool } from '@sluice/connectors';
import type { Logger } from 'pino';
import type { Keyring } from './crypto/keyring';
import type { Db, Store } from './db/client';
import type { Reads } from './db/replica';
import type { Config } from './env';
import type { Queue } from './jobs/queue';
import type { Mailer } from './mail/mailer';
import type { Permission } from './permissions';

/** What the composition root builds once and hands to every module. */
export type Deps = {
  config: Config;
  store: Store;
  db: Db;
  /** API hosts with DATABASE_READ_URL: where lists are read (db/replica.ts onReads). */
  reads?: Reads;
  queue: Queue;
  mailer: Mailer;
  keyring: Keyring;
  log: Logger;
  /** The worker's pool of data sessions, on the deps a pipeline run executes with (absent elsewhere). */
  sessions?: SessionPool;
  /** Wall clock for alert windows and throttles; tests inject one instead of sleeping. */
  clock?: () => Date;
};

export type Principal =
  | {
      type: 'user';
      userId: string;
      userSlug: string;
      email: string;
      emailVerified: boolean;
      tokenId: string;
    }
  | {
      type: 'api_key';
      apiKeyId: string;
      apiKeySlug: string;
      organizationId: string;
      /** The key's organization, read with the key: an API key belongs to exactly one. */
      organization?: Org;
      role: string;
      canManageApiKeys: boolean;
      /**
       * The stored permissions of the key's role, read with the key, when it is a custom role of
       * the organization; null when no such role row exists (built-in roles are code); absent
       * when not read.
       */
      storedRolePermissions?: string[] | null;
    };

export type ActorType = 'unknown' | 'user' | 'api_key' | 'system' | 'external';
export type Actor = { type: ActorType; slug: string | null };

export type Org = { id: string; slug: string; name: string; eventLogRetentionDays: number };

/** The tenant a request acts in, established by the auth hooks; services trust it. */
export type Scope = {
  org: Org;
  principal: Principal;
  actor: Actor;
  role: string;
  permissions: ReadonlySet<Permission>;
};

/** Passed to services: who is acting and for which request. */
export type Ctx = { deps: Deps; requestId: string | null };

export function actorOf(p: Principal): Actor {
  return p.type === 'user' ? { type: 'user', slug: p.userSlug } : { type: 'api_key', slug: p.apiKeySlug };
}

export const systemActor: Actor = { type: 'system', slug: null };
