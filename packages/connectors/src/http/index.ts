import type { ConnectorDefinition } from '../types';
import {
  type HttpConfig,
  type HttpCredentials,
  type HttpStatement,
  httpConfigSchema,
  httpCredentialsSchema,
  httpStatementSchema,
} from './config';
import { execute, importOpenApi, test } from './operations';
import { writeHttp } from './sink';
import { readHttp } from './source';

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
  test,
  query: { statementSchema: httpStatementSchema, resultType: 'http', execute },
  discover: { importSchema: (conn, ctx) => importOpenApi(conn.config, conn.credentials, ctx) },
  source: { operation: null, read: readHttp },
  sink: { operation: null, write: writeHttp },
} satisfies ConnectorDefinition<HttpConfig, HttpCredentials, HttpStatement>;
