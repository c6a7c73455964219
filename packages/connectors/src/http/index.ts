import { loadedBy } from '../capabilities';
import { undici } from '../egress';
import type { ConnectorDefinition } from '../types';
import {
  type HttpConfig,
  type HttpCredentials,
  type HttpStatement,
  httpConfigSchema,
  httpCredentialsSchema,
  httpStatementSchema,
} from './config';

// The HTTP connector (docs/connectors/http.md): a health check, OpenAPI schema import and
// one request per statement. One attempt only: a POST to a remote system is not safe to replay.
// The code below loads on first use, so a process that never talks to this kind never holds it;
// a pipeline step's `load` loads the same (capabilities.ts).

const sourceCode = () => import('./source');
const sinkCode = () => import('./sink');

/** A worker's warm start reads its made-up records through the HTTP source (exercise.ts). */
export const readServedJson = async (body: () => AsyncIterable<Uint8Array>) =>
  (await import('./exercise')).readServedJson(body);

export const httpConnector = {
  type: 'http',
  label: 'HTTP',
  configSchema: httpConfigSchema,
  credentialsSchema: httpCredentialsSchema,
  credentialDestination: ['base_url', 'openapi_url'],
  credentialsRequired: true,
  defaultReadOnly: false,
  test: async (conn, ctx) => (await import('./operations')).test(conn, ctx),
  query: {
    statementSchema: httpStatementSchema,
    resultType: 'http',
    execute: async (conn, statement, parameters, ctx) =>
      (await import('./operations')).execute(conn, statement, parameters, ctx),
  },
  discover: {
    importSchema: async (conn, ctx) =>
      (await import('./operations')).importOpenApi(conn.config, conn.credentials, ctx),
  },
  source: {
    operation: null,
    read: async (conn, step, ctx) => (await sourceCode()).readHttp(conn, step, ctx),
    load: loadedBy(sourceCode, undici),
  },
  sink: {
    operation: null,
    write: async (conn, input, step, ctx) => (await sinkCode()).writeHttp(conn, input, step, ctx),
    load: loadedBy(sinkCode, undici),
  },
} satisfies ConnectorDefinition<HttpConfig, HttpCredentials, HttpStatement>;
