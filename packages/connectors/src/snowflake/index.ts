import { z } from 'zod';
import { secretField, timeoutSecondsField } from '../fields';
import type { ConnectorDefinition } from '../types';

const identifier = (what: string) =>
  z
    .string()
    .min(1)
    .max(255)
    .regex(/^[A-Za-z0-9_$."-]+$/, 'letters, digits, _, $, ., - and quotes only')
    .describe(what);

export const snowflakeConfigSchema = z
  .object({
    account: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[A-Za-z0-9_.-]+$/, 'an account identifier such as `myorg-myaccount`')
      .describe('Account identifier (`orgname-accountname` or a locator such as `xy12345.eu-central-1`).'),
    username: identifier('User the connector signs in as.'),
    warehouse: identifier('Virtual warehouse that runs queries.').optional(),
    database: identifier('Default database.').optional(),
    schema: identifier('Default schema.').optional(),
    role: identifier('Role to use after signing in.').optional(),
    timeout_seconds: timeoutSecondsField(300, 5),
  })
  .strict()
  .describe('Snowflake connector configuration.');

export const snowflakeCredentialsSchema = z
  .union([
    z.object({ password: secretField('Password of the user.') }).strict(),
    z
      .object({
        private_key: secretField('Private key (PEM) for key-pair authentication.').regex(
          /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
          'must be a PEM private key',
        ),
        private_key_passphrase: secretField('Passphrase of an encrypted private key.').optional(),
      })
      .strict(),
  ])
  .describe('Snowflake credentials: a password, or a private key (and its passphrase). Write-only.');

export const snowflakeConnector: ConnectorDefinition = {
  type: 'snowflake',
  label: 'Snowflake',
  configSchema: snowflakeConfigSchema,
  credentialsSchema: snowflakeCredentialsSchema,
  credentialsRequired: true,
  defaultReadOnly: false,
  statementSchema: null,
  resultType: 'sql',
};
