import {
  allowsPrivateHosts,
  type Capabilities,
  type CapabilityName,
  type Connection,
  type ConnectorContext,
  type ConnectorDefinition,
  ConnectorError,
  capabilityOf,
  connectorFor,
  defaultLimits,
  EgressBlockedError,
  egressPolicy,
} from '@sluice/connectors';
import type { Deps } from '../../context';
import { DecryptionError } from '../../crypto/keyring';
import type { DbOrTx } from '../../db/client';
import { AppError } from '../../http/errors';
import { oauthAccess, providerOfType } from '../oauth/index';
import * as repo from './data-sources.repo';

// The one place a data source's credentials are decrypted: whoever calls a connector
// (test-connection, schema import, query execution, pipeline runs) gets the connection here,
// with the egress policy of this deployment and data source already decided.

export type DataSourceRow = repo.DataSourceRow;

export type LoadedConnection = {
  definition: ConnectorDefinition;
  connection: Connection;
  ctx: ConnectorContext;
};

/**
 * The capability of a data source type's connector (docs/architecture.md "Connectors"), or
 * 422 CONNECTOR_OPERATION_UNSUPPORTED naming what the type does not support.
 */
export function capabilityFor<N extends CapabilityName>(type: string, name: N): Capabilities[N] {
  return capabilityOf(connectorFor(type), name, (m) => new AppError('CONNECTOR_OPERATION_UNSUPPORTED', m));
}

/** A data source of the organization by slug, or null (callers answer 404). */
export const findDataSource = repo.findDataSource;

export const credentialBinding = (organizationId: string, credentialId: string) => ({
  organizationId,
  kind: 'data_source_credential',
  recordId: credentialId,
});

/**
 * The connector, the validated config with the decrypted current credential, and the
 * connector context. Run it before a network call, never inside a long transaction: pass the
 * transaction as `db` only when one is open anyway (PGlite has one connection).
 */
export async function loadConnection(
  db: DbOrTx,
  deps: Pick<Deps, 'config' | 'keyring' | 'log' | 'queue' | 'clock'>,
  row: DataSourceRow,
  /** The current credential when the caller read it with the row (undefined: read here). */
  current?: repo.CredentialRow | null,
): Promise<LoadedConnection> {
  const definition = connectorFor(row.type);
  // Stored config was validated on write; parsing again applies defaults added since.
  const parsed = definition.configSchema.safeParse(row.config);
  const config = (parsed.success ? parsed.data : row.config) as Record<string, unknown>;

  let credentials: Record<string, unknown> | null = null;
  let refreshCredentials: ConnectorContext['refreshCredentials'];
  const credential = current !== undefined ? current : await repo.currentCredential(db, row.id);
  const provider = providerOfType(row.type);
  if (provider) {
    // OAuth kinds: a fresh access token (refreshed when due), never the sealed bundle itself.
    const access = await oauthAccess(db, deps, row, provider, credential);
    credentials = access.credentials;
    refreshCredentials = access.refresh;
  } else if (credential?.ciphertext && credential.kid) {
    const plaintext = await deps.keyring.decrypt(
      db,
      { kid: credential.kid, ciphertext: credential.ciphertext },
      credentialBinding(row.organizationId, credential.id),
    );
    credentials = JSON.parse(plaintext) as Record<string, unknown>;
  }

  return {
    definition,
    connection: { config, credentials },
    ctx: {
      policy: egressPolicy(deps.config.deployment, allowsPrivateHosts(config), deps.config.egress.allowCidrs),
      limits: defaultLimits,
      endpoints: { googleApiRoot: deps.config.egress.googleApiRoot },
      readOnly: row.readOnly,
      ...(refreshCredentials ? { refreshCredentials } : {}),
    },
  };
}

export type Failure = { code: string; message: string };

/**
 * A connector failure as stored and shown (test_error, schema_diagnostic, query errors).
 * Connector messages are sanitized by contract; anything else is reported without detail and
 * logged by the caller, since its message may carry what a user must not see.
 */
export function describeFailure(err: unknown): { failure: Failure; unexpected: boolean } {
  if (err instanceof ConnectorError)
    return { failure: { code: err.code, message: err.message }, unexpected: false };
  if (err instanceof EgressBlockedError) {
    return { failure: { code: 'PRIVATE_HOST_BLOCKED', message: err.message }, unexpected: false };
  }
  if (err instanceof DecryptionError) {
    return {
      failure: {
        code: 'CREDENTIALS_UNREADABLE',
        message: 'the stored credentials could not be decrypted; set them again',
      },
      unexpected: true,
    };
  }
  return { failure: { code: 'INTERNAL', message: 'the connector failed unexpectedly' }, unexpected: true };
}
