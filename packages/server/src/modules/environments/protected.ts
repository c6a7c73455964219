import { z } from 'zod';
import { AppError } from '../../http/errors';
import { slugSchema } from '../../http/fields';

// A protected environment (typically production) changes what runs only when the caller names
// it exactly: a guard against a script or a person aiming at the wrong environment.

/** What the guard needs of an environment; any environment row or resource fits. */
export type GuardedEnvironment = { slug: string; protected: boolean };

/**
 * Throws 409 PROTECTED_ENVIRONMENT_CONFIRMATION_REQUIRED unless `env` is not protected or
 * `confirmation` is exactly its slug. Call it inside the transaction, after reading (ideally
 * locking) the environment, before the first write of any operation that changes what runs
 * there: enabling/disabling it for a project, unprotecting, deleting or purging it, writing or
 * deleting its secrets and variables, deploying, executing, binding data sources.
 */
export function assertProtectedConfirmation(
  env: GuardedEnvironment,
  confirmation: string | null | undefined,
): void {
  if (!env.protected || confirmation === env.slug) return;
  throw new AppError(
    'PROTECTED_ENVIRONMENT_CONFIRMATION_REQUIRED',
    confirmation
      ? `protected_environment_confirmation does not match; send the exact slug of environment ${env.slug}`
      : `environment ${env.slug} is protected; repeat the request with protected_environment_confirmation=${env.slug}`,
  );
}

/**
 * The confirmation of a request that may carry it in the body and in the query string; the body
 * wins when both are present. Pass `req.body?.protected_environment_confirmation` and
 * `req.query.protected_environment_confirmation`.
 */
export function confirmationOf(...candidates: (string | null | undefined)[]): string | null {
  for (const c of candidates) if (c !== undefined && c !== null) return c;
  return null;
}

export const confirmationField = slugSchema
  .nullable()
  .optional()
  .describe('Exact slug of the environment, required when it is protected.');

/** Query string of operations without a body (and accepted beside a body too). */
export const confirmationQuery = z
  .object({
    protected_environment_confirmation: slugSchema
      .optional()
      .describe('Exact slug of the environment, required when it is protected.'),
  })
  .strict();
