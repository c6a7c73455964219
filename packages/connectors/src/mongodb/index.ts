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
    read: async (conn, step, ctx) => (await import('./source')).readMongo(conn, step, ctx),
    load: async () => {
      await Promise.all([import('./source'), (await import('./connect')).loadDriver()]);
    },
  },
  sink: {
    operation: mongodbOperationSchema,
    write: async (conn, input, step, ctx) => (await import('./sink')).writeMongo(conn, input, step, ctx),
    load: async () => {
      await Promise.all([import('./sink'), (await import('./connect')).loadDriver()]);
    },
  },
} satisfies ConnectorDefinition<MongoConfig, MongoCredentials, MongoStatement>;
