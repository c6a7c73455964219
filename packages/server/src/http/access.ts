import type { Permission } from '../permissions';

// Every route declares who may call it; the auth hooks enforce it before validation, so a
// caller outside the organization gets 404 whatever the body looks like.
export type Access =
  | { kind: 'public' }
  /** Any valid token; `users/me` style routes. */
  | { kind: 'principal'; userOnly?: boolean }
  /** A route under /organizations/:organization needing one permission. */
  | { kind: 'org'; permission: Permission };

export const access = {
  public: (): { access: Access } => ({ access: { kind: 'public' } }),
  principal: (): { access: Access } => ({ access: { kind: 'principal' } }),
  user: (): { access: Access } => ({ access: { kind: 'principal', userOnly: true } }),
  org: (permission: Permission): { access: Access } => ({ access: { kind: 'org', permission } }),
};

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
}
