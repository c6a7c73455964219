import type { Deps } from '../../context';
import type { TypedApp } from '../../http/typed-app';
import { accountDeletionRoutes } from './account-deletion.routes';
import { patsRoutes } from './pats.routes';
import { usersRoutes } from './users.routes';

/** Accounts, their personal access tokens and their deletion: everything under /users. */
export function identityRoutes(app: TypedApp, deps: Deps) {
  usersRoutes(app, deps);
  patsRoutes(app, deps);
  accountDeletionRoutes(app, deps);
}
