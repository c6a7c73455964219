import { bigqueryFixture } from './bigquery';
import type { ConformanceFixture } from './fixture';
import { ftpFixture } from './ftp';
import { gitFixture } from './git';
import { githubFixture } from './github';
import { gitlabFixture } from './gitlab';
import { googleWorkspaceFixture } from './google-workspace';
import { httpFixture } from './http';
import { mongodbFixture } from './mongodb';
import { mysqlFixture } from './mysql';
import { postgresFixture } from './postgres';
import { s3Fixture } from './s3';
import { salesforceFixture } from './salesforce';
import { snowflakeFixture } from './snowflake';

// One line per registered connector kind (the suite fails for a kind missing here).
export const fixtures: Record<string, ConformanceFixture> = {
  http: httpFixture,
  ftp: ftpFixture,
  git: gitFixture,
  postgres: postgresFixture,
  mysql: mysqlFixture,
  bigquery: bigqueryFixture,
  snowflake: snowflakeFixture,
  google_workspace: googleWorkspaceFixture,
  salesforce: salesforceFixture,
  mongodb: mongodbFixture,
  github: githubFixture,
  gitlab: gitlabFixture,
  s3: s3Fixture,
};
