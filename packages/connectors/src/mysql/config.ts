import { passwordCredentialsSchema, relationalConfigSchema, sqlStatementSchema } from '../relational/config';

// MySQL's config, credentials and statements: the shapes every SQL kind shares
// (relational/config.ts) with this kind's port and placeholder dialect.

export const mysqlConfigSchema = relationalConfigSchema(3306, 'MySQL');
export const mysqlCredentialsSchema = passwordCredentialsSchema;
export const mysqlStatementSchema = sqlStatementSchema('mysql');
