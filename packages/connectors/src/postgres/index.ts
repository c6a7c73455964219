import { onFirstCall } from '../lazy';
import type { SqlStatement } from '../relational/config';
import type { ConnectorDefinition } from '../types';
import { postgresConfigSchema, postgresCredentialsSchema, postgresStatementSchema } from './config';
import type { PgConnection } from './connect';

// PostgreSQL (docs/connectors/postgres.md). Every call opens one session to the address the
// egress guard checked and closes it before returning. The driver and the code below load on
// first use (lazy.ts).

const admin = () => import('./changes/admin');
const operations = () => import('./operations');

export * from './config';

export const postgres = {
  type: 'postgres',
  label: 'PostgreSQL',
  configSchema: postgresConfigSchema,
  credentialsSchema: postgresCredentialsSchema,
  credentialDestination: ['host', 'port'],
  credentialsRequired: false,
  defaultReadOnly: false,
  test: onFirstCall(operations, 'testPg'),
  query: {
    statementSchema: postgresStatementSchema,
    resultType: 'sql',
    execute: onFirstCall(operations, 'executePg'),
  },
  discover: { importSchema: onFirstCall(operations, 'importPgSchema') },
  source: { operation: null, read: onFirstCall(() => import('./source'), 'readPg') },
  sink: { operation: null, write: onFirstCall(() => import('./sink'), 'writePg') },
  ledger: { committedWrites: onFirstCall(() => import('./ledger'), 'committedWrites') },
  // Change data capture (docs/cdc.md).
  changes: {
    check: onFirstCall(() => import('./changes/check'), 'checkPgChanges'),
    read: onFirstCall(() => import('./changes/read'), 'readPgChanges'),
    captures: onFirstCall(admin, 'pgCaptures'),
    release: onFirstCall(admin, 'pgRelease'),
  },
} satisfies ConnectorDefinition<PgConnection['config'], PgConnection['credentials'], SqlStatement>;

export const definition = postgres;
