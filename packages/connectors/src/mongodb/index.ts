import { loadedBy } from '../capabilities';
import type { ConnectorDefinition } from '../types';
import {
  type MongoConfig,
  type MongoCredentials,
  type MongoStatement,
  mongodbConfigSchema,
  mongodbCredentialsSchema,
  mongodbOperationSchema,
  mongodbStatementSchema,
} from './config';

export * from './config';

// MongoDB (docs/connectors/mongodb.md). Every call opens one client through the egress guard
// and closes it before returning (a pipeline step keeps its client until its stream ends).
// The pipeline code loads on first use; `load` loads the same (capabilities.ts).
const sourceCode = () => import('./source');
const sinkCode = () => import('./sink');
/** The MongoDB driver, loaded with the code that uses it. */
const driver = async () => (await import('./connect')).loadDriver();

export const mongodbConnector = {
  type: 'mongodb',
  label: 'MongoDB',
  configSchema: mongodbConfigSchema,
  credentialsSchema: mongodbCredentialsSchema,
  credentialDestination: ['hosts'],
  credentialsRequired: true,
  defaultReadOnly: false,
  // The driver loads on first use, so a process that never talks to this kind never holds it.
  test: async (conn, ctx) => (await import('./operations')).testMongo(conn, ctx),
  query: {
    statementSchema: mongodbStatementSchema,
    resultType: 'mongodb',
    execute: async (conn, statement, parameters, ctx) =>
      (await import('./operations')).executeMongo(conn, statement, parameters, ctx),
  },
  discover: {
    importSchema: async (conn, ctx) => (await import('./operations')).importMongoSchema(conn, ctx),
  },
  source: {
    operation: mongodbOperationSchema,
    read: async (conn, step, ctx) => (await sourceCode()).readMongo(conn, step, ctx),
    load: loadedBy(sourceCode, driver),
  },
  sink: {
    operation: mongodbOperationSchema,
    write: async (conn, input, step, ctx) => (await sinkCode()).writeMongo(conn, input, step, ctx),
    load: loadedBy(sinkCode, driver),
  },
} satisfies ConnectorDefinition<MongoConfig, MongoCredentials, MongoStatement>;
