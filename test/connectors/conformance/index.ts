import type { ConformanceFixture } from './fixture';
import { ftpFixture } from './ftp';
import { gitFixture } from './git';
import { githubFixture } from './github';
import { gitlabFixture } from './gitlab';
import { httpFixture } from './http';
import { mongodbFixture } from './mongodb';
import { mysqlFixture } from './mysql';
import { postgresFixture } from './postgres';

// One line per registered connector kind (the suite fails for a kind missing here).
export const fixtures: Record<string, ConformanceFixture> = {
  http: httpFixture,
  ftp: ftpFixture,
  git: gitFixture,
  postgres: postgresFixture,
  mysql: mysqlFixture,
  mongodb: mongodbFixture,
  github: githubFixture,
  gitlab: gitlabFixture,
};
