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
import type { ConnectorDefinition, DataSourceType } from './types';

// Connectors are data (ARCHITECTURE.md): one line per kind, no central switch elsewhere.
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

const byType = new Map(connectors.map((c) => [c.type, c]));

export function connectorFor(type: DataSourceType | string): ConnectorDefinition {
  const def = byType.get(type as DataSourceType);
  if (!def) throw new Error(`no connector registered for type ${type}`);
  return def;
}
