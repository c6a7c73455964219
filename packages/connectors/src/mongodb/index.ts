import { z } from 'zod';
import { allowPrivateHostsField, secretField } from '../fields';
import type { ConnectorDefinition } from '../types';
import { type MongoStatement, mongodbOperationSchema, mongodbStatementSchema } from './statement';

// MongoDB (docs/connectors/mongodb.md). Every call opens one client through the egress guard
// and closes it before returning (a pipeline step keeps its client until its stream ends).

export const mongodbConfigSchema = z
  .object({
    hosts: z
      .array(
        z
          .string()
          .min(1)
          .max(261)
          .regex(/^(\[[0-9a-fA-F:.]+\]|[^\s/@:[\]]+)(:\d{1,5})?$/, '`host` or `host:port`'),
      )
      .min(1)
      .max(50)
      .describe('Replica-set members or mongos routers, each `host` or `host:port` (port 27017 by default).'),
    database: z.string().min(1).max(64).describe('Database the connector reads and writes.'),
    username: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .describe('User name; omit for a server without authentication.'),
    auth_source: z
      .string()
      .min(1)
      .max(64)
      .default('admin')
      .describe('Database holding the user (default admin).'),
    replica_set: z.string().min(1).max(255).optional().describe('Replica-set name.'),
    tls: z.boolean().default(true).describe('Connect with TLS (default true).'),
    allow_private_hosts: allowPrivateHostsField,
  })
  .strict()
  .describe('MongoDB connector configuration.');

export const mongodbCredentialsSchema = z
  .object({ password: secretField('Password of the user.').optional() })
  .strict()
  .describe('MongoDB credentials; `{}` when the server needs no authentication. Write-only.');

export type MongoConfig = z.infer<typeof mongodbConfigSchema>;
export type MongoCredentials = z.infer<typeof mongodbCredentialsSchema>;

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
  },
  sink: {
    operation: mongodbOperationSchema,
    write: async (conn, input, step, ctx) => (await import('./sink')).writeMongo(conn, input, step, ctx),
  },
} satisfies ConnectorDefinition<MongoConfig, MongoCredentials, MongoStatement>;
