import { onFirstCall } from '../lazy';
import type { ConnectorDefinition } from '../types';
import {
  type HttpConfig,
  type HttpCredentials,
  type HttpStatement,
  httpConfigSchema,
  httpCredentialsSchema,
  httpStatementSchema,
} from './config';

// Operations, source and sink load on first use (../lazy.ts).
const operations = () => import('./operations');

// The HTTP connector (docs/connectors/http.md): a health check, OpenAPI schema import and
// one request per statement. One attempt only: a POST to a remote system is not safe to replay.

export const httpConnector = {
  type: 'http',
  label: 'HTTP',
  configSchema: httpConfigSchema,
  credentialsSchema: httpCredentialsSchema,
  credentialDestination: ['base_url', 'openapi_url'],
  credentialsRequired: true,
  defaultReadOnly: false,
  test: onFirstCall(operations, 'test'),
  query: {
    statementSchema: httpStatementSchema,
    resultType: 'http',
    execute: onFirstCall(operations, 'execute'),
  },
  discover: {
    importSchema: async (conn, ctx) => (await operations()).importOpenApi(conn.config, conn.credentials, ctx),
  },
  source: { operation: null, read: onFirstCall(() => import('./source'), 'readHttp') },
  sink: { operation: null, write: onFirstCall(() => import('./sink'), 'writeHttp') },
} satisfies ConnectorDefinition<HttpConfig, HttpCredentials, HttpStatement>;
