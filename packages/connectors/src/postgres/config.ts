import { passwordCredentialsSchema, relationalConfigSchema, sqlStatementSchema } from '../relational/config';

// PostgreSQL's config, credentials and statements: the shapes every SQL kind shares
// (relational/config.ts) with this kind's port and placeholder dialect.

export const postgresConfigSchema = relationalConfigSchema(5432, 'PostgreSQL');
export const postgresCredentialsSchema = passwordCredentialsSchema;
export const postgresStatementSchema = sqlStatementSchema('postgres');
