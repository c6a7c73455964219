import {
  passwordCredentialsSchema,
  relationalConfigSchema,
  type SqlStatement,
  sqlStatementSchema,
} from '../relational/config';
import type { ConnectorDefinition } from '../types';
import type { MysqlConnection } from './connect';
import { committedWrites } from './ledger';
import { executeMysql, importMysqlSchema, testMysql } from './operations';
import { readMysql } from './read';
import { writeMysql } from './write';

// MySQL and MariaDB (docs/connectors/mysql.md). Every call opens one session to the address
// the egress guard checked and closes it before returning.

export const mysqlConfigSchema = relationalConfigSchema(3306, 'MySQL');

export const mysql: ConnectorDefinition<
  MysqlConnection['config'],
  MysqlConnection['credentials'],
  SqlStatement
> = {
  type: 'mysql',
  label: 'MySQL',
  configSchema: mysqlConfigSchema,
  credentialsSchema: passwordCredentialsSchema,
  credentialDestination: ['host', 'port'],
  credentialsRequired: false,
  defaultReadOnly: false,
  statementSchema: sqlStatementSchema('mysql'),
  resultType: 'sql',
  test: (conn, ctx) => testMysql(conn, ctx),
  importSchema: (conn, ctx) => importMysqlSchema(conn, ctx),
  execute: (conn, statement, parameters, ctx) => executeMysql(conn, statement, parameters, ctx),
  read: (conn, step, ctx) => readMysql(conn, step, ctx),
  write: (conn, input, step, ctx) => writeMysql(conn, input, step, ctx),
  committedWrites: (conn, step, keyPrefix, ctx) => committedWrites(conn, step, keyPrefix, ctx),
};

export const definition = mysql;
