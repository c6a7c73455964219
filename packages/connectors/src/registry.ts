import { bigqueryConnector } from './bigquery/index';
import { ftpConnector } from './ftp/index';
import { gitConnector } from './git/index';
import { githubConnector } from './github/index';
import { gitlabConnector } from './gitlab/index';
import { googleWorkspaceConnector } from './google-workspace/index';
import { httpConnector } from './http/index';
import { mongodbConnector } from './mongodb/index';
import { mysql } from './mysql/index';
import { postgres } from './postgres/index';
import { s3Connector } from './s3/index';
import { salesforceConnector } from './salesforce/index';
import { snowflakeConnector } from './snowflake/index';
import type { ConnectorDefinition } from './types';

// Connectors are data (docs/architecture.md "Connectors"): one line per kind, the
// only list of kinds; no central switch elsewhere. The order is the order of the `type` enum in
// the OpenAPI document.
export const connectors: readonly ConnectorDefinition[] = [
  httpConnector,
  ftpConnector,
  gitConnector,
  postgres,
  mysql,
  bigqueryConnector,
  snowflakeConnector,
  googleWorkspaceConnector,
  salesforceConnector,
  mongodbConnector,
  githubConnector,
  gitlabConnector,
  s3Connector,
];

/** Every data source type, in registry order. */
export const dataSourceTypes = connectors.map((c) => c.type) as [string, ...string[]];

const byType = new Map(connectors.map((c) => [c.type, c]));

export function connectorFor(type: string): ConnectorDefinition {
  const def = byType.get(type);
  if (!def) throw new Error(`no connector registered for type ${type}`);
  return def;
}
