import { isDeepStrictEqual } from 'node:util';
import type { ConnectorDefinition } from '@sluice/connectors';
import type { Tx } from '../../db/client';
import { AppError, validationFailed } from '../../http/errors';
import { providerOfType } from '../oauth/index';
import * as repo from './data-sources.repo';

// Stored credentials never follow a new destination. Whoever can change a data source's config
// is not necessarily whoever set its secret: if a PATCH could move base_url (or host, port,
// repo_url, instance_url…) and keep the credential, anyone with data_sources.write could have
// an admin's secret delivered to a server of their choosing. Each connector declares which
// config fields decide the destination (credentialDestination); changing one needs the
// credentials in the same request.

/** Destination fields whose value the change sets to something new (removing one sends nothing). */
export function changedDestination(
  definition: ConnectorDefinition,
  stored: Record<string, unknown>,
  next: Record<string, unknown>,
): string[] {
  return definition.credentialDestination.filter(
    (f) => next[f] !== undefined && !isDeepStrictEqual(next[f], stored[f]),
  );
}

/**
 * Throws 400 naming the first changed destination field when the data source holds a
 * credential that the request does not replace. OAuth grants cannot be sent again in a
 * request, so a connected grant (or the organization's shared GitLab connection) blocks the
 * change: the user makes a new data source and authorizes it for the new destination.
 */
export async function assertCredentialsFollow(
  tx: Tx,
  row: repo.DataSourceRow,
  changed: string[],
  opts: { credentialsGiven: boolean; usesOrganizationConnection: boolean },
) {
  if (changed.length === 0 || opts.credentialsGiven) return;
  const current = await repo.currentCredential(tx, row.id);
  const oauth = providerOfType(row.type) !== null;
  const holdsSecret = oauth
    ? opts.usesOrganizationConnection || (current !== null && current.status !== 'pending')
    : current !== null && current.ciphertext !== null;
  if (!holdsSecret) return;
  const field = changed[0];
  throw validationFailed(
    [
      {
        path: `config.${field}`,
        code: oauth ? 'authorization_bound' : 'credentials_required',
        message: oauth
          ? `${field} decides where the OAuth grant is sent; it cannot change while the data source is connected (create a new data source for the new destination)`
          : `${field} decides where the credentials are sent; send credentials again in the same request to change it`,
      },
    ],
    `changing ${changed.join(', ')} needs the credentials again`,
  );
}

/** Credentials given in a PATCH, checked against the kind's schema. */
export function parsedCredentials(definition: ConnectorDefinition, given: Record<string, unknown>) {
  if (!definition.credentialsSchema) {
    throw new AppError(
      'CONNECTOR_OPERATION_UNSUPPORTED',
      `the ${definition.type} connector takes no static credentials; it connects through OAuth`,
    );
  }
  const parsed = definition.credentialsSchema.safeParse(given);
  if (!parsed.success) {
    throw validationFailed(
      parsed.error.issues.map((i) => ({
        path: ['credentials', ...i.path.map(String)].join('.'),
        code: i.code,
        message: i.message,
      })),
    );
  }
  return parsed.data as Record<string, unknown>;
}
